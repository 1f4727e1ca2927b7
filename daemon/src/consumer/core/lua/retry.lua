-- daemon/src/consumer/core/lua/retry.lua - sends a batch of failed jobs back for another attempt, at
-- once or delayed (BullMQ's retryJob and moveToDelayed), after helpers.lua and finish_helpers.lua.
-- KEYS: active delayed events meta stalled wait prioritized marker pc
-- ARGV: base now, then per job: id token reason stacktraceJSON delayMs lifo(0/1)
-- Returns one status per job, as complete.lua's.
local activeKey, delayedKey, eventsKey, metaKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local waitKey, prioKey, markerKey, pcKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
checkTypes({activeKey, delayedKey, eventsKey, metaKey, stalledKey, waitKey, prioKey, markerKey, pcKey})
checkNumber(pcKey)
local qMeta = queueMeta(metaKey)
local evMax = eventsMaxLen(metaKey, qMeta)
local status, hashes = takeLocks(3, 6, activeKey, {'priority'})
local woke = false
local j = 0
for i = 3, #ARGV, 6 do
  j = j + 1
  local id, reason, stack = ARGV[i], ARGV[i + 2], ARGV[i + 3]
  local delay, lifo = tonumber(ARGV[i + 4]), ARGV[i + 5] == '1'
  local jobKey = base .. id
  if status[j] == 0 then
    rcall('HSET', jobKey, 'failedReason', reason, 'stacktrace', stack)
    rcall('HINCRBY', jobKey, 'atm', 1)
    if delay > 0 then
      local due = now + delay
      -- ×4096 leaves room for a sequence that keeps equal due times FIFO (docs/protocols/bullmq.md,
      -- 'Delayed jobs')
      local score = due * 4096
      local last = rcall('ZREVRANGEBYSCORE', delayedKey, score + 4095, score, 'WITHSCORES', 'LIMIT', 0, 1)
      if last[2] then score = math.min(tonumber(last[2]) + 1, score + 4095) end
      rcall('HSET', jobKey, 'delay', delay)
      rcall('ZADD', delayedKey, score, id)
      rcall('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'delayed', 'jobId', id, 'delay', due)
    else
      local prio = tonumber(hashes[j][2] or '0') or 0
      if prio > 0 then
        addPrioritized(prioKey, pcKey, prio, id)
      elseif lifo then
        rcall('RPUSH', waitKey, id)
      else
        rcall('LPUSH', waitKey, id)
      end
      rcall('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
      woke = true
    end
  end
end
releaseLocks(stalledKey)
if woke and not isBlocked(qMeta, activeKey) then rcall('ZADD', markerKey, 0, '0') end
local first = rcall('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
if first[2] then rcall('ZADD', markerKey, math.floor(tonumber(first[2]) / 4096), '1') end
return status
