-- daemon/src/consumer/core/lua/complete.lua - completes a batch of jobs (BullMQ's moveToFinished,
-- completed), after helpers.lua and finish_helpers.lua.
-- KEYS: active completed events meta stalled wait prioritized
-- ARGV: base now, then per job: id token returnvalueJSON keepCount keepAgeSeconds
-- Returns one status per job: 0 done, -1 missing, -2 lock gone, -6 lock taken by another, -3 not active
--
-- The writes that need not be per job (the completed set, removals, trimming, and takeLock's lock
-- keys and stalled entries) are gathered and made once per batch.
local activeKey, doneKey, eventsKey, metaKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
checkTypes({activeKey, doneKey, eventsKey, metaKey, stalledKey, KEYS[6], KEYS[7]})
rcall('XTRIM', eventsKey, 'MAXLEN', '~', eventsMaxLen(metaKey, queueMeta(metaKey)))
local status, hashes = takeLocks(3, 5, activeKey, {'deid', 'atm'})
local finished, removed = {}, {}
local policies, policyOrder = {}, {}
local j = 0
for i = 3, #ARGV, 5 do
  j = j + 1
  if status[j] == 0 then
    local id, rv, keepCount, keepAge = ARGV[i], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    local jobKey, h = base .. id, hashes[j]
    dropDedupKey(id, h[2])
    if keepCount ~= '0' then
      finished[#finished + 1] = nowMs
      finished[#finished + 1] = id
      local atm = tonumber(h[3])
      rcall('HSET', jobKey, 'atm', atm and tostring(atm + 1) or '1', 'returnvalue', rv, 'finishedOn', nowMs)
      local p = keepCount .. ':' .. keepAge
      if not policies[p] then
        policies[p] = {tonumber(keepCount), tonumber(keepAge)}
        policyOrder[#policyOrder + 1] = p
      end
    else
      removed[#removed + 1] = id
    end
    rcall('XADD', eventsKey, '*', 'event', 'completed', 'jobId', id, 'returnvalue', rv, 'prev', 'active')
  end
end
releaseLocks(stalledKey)
chunked('ZADD', doneKey, finished)
removeJobs(removed)
for _, p in ipairs(policyOrder) do trimFinished(doneKey, policies[p][1], policies[p][2]) end
drainedEvent(KEYS[6], activeKey, KEYS[7], eventsKey)
return status
