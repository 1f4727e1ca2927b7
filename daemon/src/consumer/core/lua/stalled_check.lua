-- daemon/src/consumer/core/lua/stalled_check.lua - requeues the active jobs whose lock expired
-- (BullMQ's moveStalledJobsToWait), after helpers.lua.
-- KEYS: stalled stalled-check active wait events meta marker
-- ARGV: base now stalledIntervalMs maxStalledCount. Returns the requeued ids.
-- Requeues in queue order: active holds the newest on the left, and wait is consumed from the
-- right, so walking active left to right and RPUSHing leaves the oldest job next in line.
local stalledKey, checkKey, activeKey, waitKey, eventsKey, metaKey, markerKey =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
checkTypes({stalledKey, activeKey, waitKey, eventsKey, metaKey, markerKey})
local qMeta = queueMeta(metaKey)
if rcall('EXISTS', checkKey) == 1 then return {} end
rcall('SET', checkKey, nowMs, 'PX', ARGV[3])
local maxStalled = tonumber(ARGV[4])
rcall('XTRIM', eventsKey, 'MAXLEN', '~', eventsMaxLen(metaKey, qMeta))
local requeued = {}
local suspects = rcall('SMEMBERS', stalledKey)
if #suspects > 0 then
  rcall('DEL', stalledKey)
  local suspect = {}
  for _, id in ipairs(suspects) do
    if string.sub(id, 1, 2) == '0:' then rcall('LREM', activeKey, 1, id) else suspect[id] = true end
  end
  local active = rcall('LRANGE', activeKey, 0, -1)
  for _, id in ipairs(active) do
    local jobKey = base .. id
    if suspect[id] and rcall('EXISTS', jobKey .. ':lock') == 0 then
      suspect[id] = nil
      rcall('LREM', activeKey, 1, id)
      if not namesQueueKey(id) and rcall('TYPE', jobKey)['ok'] == 'hash' then
        local stc = rcall('HINCRBY', jobKey, 'stc', 1)
        if stc > maxStalled and rcall('HEXISTS', jobKey, 'rjk') == 0 then
          rcall('HSET', jobKey, 'defa', 'job stalled more than allowable limit')
        end
        rcall('RPUSH', waitKey, id)
        rcall('XADD', eventsKey, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
        rcall('XADD', eventsKey, '*', 'event', 'stalled', 'jobId', id)
        requeued[#requeued + 1] = id
      end
    end
  end
  if #requeued > 0 and not isBlocked(qMeta, activeKey) then rcall('ZADD', markerKey, 0, '0') end
end
local active = rcall('LRANGE', activeKey, 0, -1)
for i = 1, #active, 5000 do
  rcall('SADD', stalledKey, unpack(active, i, math.min(i + 4999, #active)))
end
return requeued
