-- daemon/src/consumer/core/lua/fail.lua - fails a batch of jobs for good (BullMQ's moveToFinished,
-- failed), after helpers.lua and finish_helpers.lua.
-- KEYS: active failed events meta stalled wait prioritized
-- ARGV: base now, then per job: id token reason stacktraceJSON keepCount keepAgeSeconds attempts
-- Returns one status per job, as complete.lua's.
local activeKey, failedKey, eventsKey, metaKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
checkTypes({activeKey, failedKey, eventsKey, metaKey, stalledKey, KEYS[6], KEYS[7]})
rcall('XTRIM', eventsKey, 'MAXLEN', '~', eventsMaxLen(metaKey, queueMeta(metaKey)))
local status, hashes = takeLocks(3, 7, activeKey, {'deid'})
local j = 0
for i = 3, #ARGV, 7 do
  j = j + 1
  local id, reason, stack = ARGV[i], ARGV[i + 2], ARGV[i + 3]
  local keepCount, keepAge, attempts = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])
  local jobKey = base .. id
  if status[j] == 0 then
    dropDedupKey(id, hashes[j][2])
    rcall('HSET', jobKey, 'failedReason', reason, 'stacktrace', stack)
    rcall('HDEL', jobKey, 'defa')
    local atm = rcall('HINCRBY', jobKey, 'atm', 1)
    if keepCount ~= 0 then
      rcall('ZADD', failedKey, nowMs, id)
      rcall('HSET', jobKey, 'finishedOn', nowMs)
      trimFinished(failedKey, keepCount, keepAge)
    else
      removeJobs({id})
    end
    rcall('XADD', eventsKey, '*', 'event', 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active')
    if atm >= attempts then
      rcall('XADD', eventsKey, '*', 'event', 'retries-exhausted', 'jobId', id, 'attemptsMade', atm)
    end
  end
end
releaseLocks(stalledKey)
drainedEvent(KEYS[6], activeKey, KEYS[7], eventsKey)
return status
