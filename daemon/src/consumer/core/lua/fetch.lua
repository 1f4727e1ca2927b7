-- daemon/src/consumer/core/lua/fetch.lua - takes up to maxJobs jobs for the consumer (BullMQ's
-- moveToActive), after helpers.lua.
-- KEYS: wait active prioritized delayed meta events marker pc limiter lease
-- ARGV: base now tokenPrefix firstN lockMs maxJobs workerName leaseHolder
-- A leaseHolder (not empty) fences the fetch: when the lease key does not hold exactly that value,
-- nothing is taken and the reply is the error NOLEASE (a consumer whose partition went to another
-- takes no job, even a fetch that waited behind its BZPOPMIN while the process was paused).
-- Returns {nextDelayedDueMs, rateLimitedForMs} when nothing was taken, else
-- {nextDelayedDueMs, rateLimitedForMs, {field names}, id, token, {values of those fields}, id, ...}
--
-- Redis's time per job bounds every consumer's drain rate, and with appendonly each write command
-- costs its own AOF entry, so the list moves are one command per batch (LRANGE/LTRIM, one LPUSH)
-- and a job's hash changes are one HSET. The result is what RPOPLPUSH per job would leave.
-- Only the fields the consumer reads come back (HMGET, names once per reply): HGETALL returned
-- the whole hash, which Lua then walked twice and Redis converted twice.
local waitKey, activeKey, prioKey, delayedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local metaKey, eventsKey, markerKey, pcKey, limiterKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
checkLease(KEYS[10], ARGV[8])
local n = tonumber(ARGV[4])
local maxJobs = tonumber(ARGV[6])
checkTypes({waitKey, activeKey, prioKey, delayedKey, metaKey, eventsKey, markerKey, pcKey, limiterKey})
checkNumber(pcKey)
checkNumber(limiterKey)
local qMeta = queueMeta(metaKey)
-- the rate limit: at most `max` jobs per `duration` ms
local rate = rcall('HMGET', metaKey, 'max', 'duration')
if (rate[1] and not tonumber(rate[1])) or (rate[2] and not tonumber(rate[2])) then
  error({err = 'BADQUEUE queue key ' .. metaKey .. ' holds a rate limit that is no number'})
end
local evMax = eventsMaxLen(metaKey, qMeta)

-- promote delayed jobs that are due (our own retries and producers' `delay` need it); an entry
-- without a job hash, or one naming a queue key, is dropped
local due = rcall('ZRANGEBYSCORE', delayedKey, 0, (now + 1) * 4096 - 1, 'LIMIT', 0, 1000)
for _, id in ipairs(due) do
  rcall('ZREM', delayedKey, id)
  local jobKey = base .. id
  if not namesQueueKey(id) and rcall('TYPE', jobKey)['ok'] == 'hash' then
    local prio = tonumber(rcall('HGET', jobKey, 'priority') or '0') or 0
    if prio == 0 then
      rcall('LPUSH', waitKey, id)
    else
      addPrioritized(prioKey, pcKey, prio, id)
    end
    rcall('HSET', jobKey, 'delay', 0)
    rcall('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'waiting', 'jobId', id, 'prev', 'delayed')
  end
end
local blocked = isBlocked(qMeta, activeKey)
if #due > 0 and not blocked then rcall('ZADD', markerKey, 0, '0') end

local function nextDelayed()
  local first = rcall('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
  if first[2] then return math.floor(tonumber(first[2]) / 4096) end
  return 0
end
if blocked then return {nextDelayed(), 0} end

local limit = maxJobs
if qMeta.concurrency then limit = math.min(limit, qMeta.concurrency - rcall('LLEN', activeKey)) end
local rateMax = tonumber(rate[1])
local rateTtl = 0
if rateMax then
  local used = tonumber(rcall('GET', limiterKey) or '0')
  local ttl = rcall('PTTL', limiterKey)
  if used >= rateMax and ttl > 0 then
    limit = 0
    rateTtl = ttl
  elseif ttl > 0 then
    limit = math.min(limit, rateMax - used)
  else
    limit = math.min(limit, rateMax)
  end
end

-- ids in the order RPOPLPUSH would take them: wait's right end first, then by priority. Each job is
-- read before anything leaves wait or prioritized, and nothing after that can fail.
local ids = {}
local w, p = {}, {}
if limit > 0 then
  w = rcall('LRANGE', waitKey, -limit, -1)
  for i = #w, 1, -1 do ids[#ids + 1] = w[i] end
  local want = limit - #ids
  if want > 0 then
    p = rcall('ZRANGE', prioKey, 0, want - 1)
    for i = 1, #p do ids[#ids + 1] = p[i] end
  end
end

-- the fields the consumer reads (h[1] data, h[3] defa, name: a message or an edit or delete), and
-- ats, returned incremented
local jobFields = {'data', 'opts', 'defa', 'atm', 'attemptsMade', 'ats', 'name'}
local hashes = {}
for k, id in ipairs(ids) do
  local jobKey = base .. id
  -- a legacy marker, an id naming a queue key, or an id without a job hash (none, or a key of
  -- another type: pcall) would be a phantom job: dropped (docs/protocols/bullmq.md, 'Fetching')
  local h = false
  if string.sub(id, 1, 2) ~= '0:' and not namesQueueKey(id) then
    h = redis.pcall('HMGET', jobKey, unpack(jobFields))
    if h.err or (not h[1] and rcall('EXISTS', jobKey) == 0) then h = false end
  end
  hashes[k] = h
end
if #w > 0 then rcall('LTRIM', waitKey, 0, -(#w + 1)) end
if #p > 0 then
  rcall('ZREMRANGEBYRANK', prioKey, 0, #p - 1)
  if #p < limit - #w then rcall('DEL', pcKey) end
end

local out = {0, 0, jobFields}
local taken, counted, nOut = {}, 0, 3
local tokenPrefix, lockMs, worker = ARGV[3], ARGV[5], ARGV[7]
for k, id in ipairs(ids) do
  local jobKey = base .. id
  local h = hashes[k]
  if h then
    local ats = tonumber(h[6])
    ats = ats and tostring(ats + 1) or '1'
    h[6] = ats
    if not h[3] then counted = counted + 1 end
    local token = tokenPrefix .. n
    n = n + 1
    rcall('SET', jobKey .. ':lock', token, 'PX', lockMs)
    rcall('XADD', eventsKey, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting')
    rcall('HSET', jobKey, 'processedOn', nowMs, 'pb', worker, 'ats', ats)
    taken[#taken + 1] = id
    out[nOut + 1], out[nOut + 2], out[nOut + 3] = id, token, h
    nOut = nOut + 3
  end
end
chunked('LPUSH', activeKey, taken)
if rateMax and counted > 0 then
  if rcall('INCRBY', limiterKey, counted) == counted then
    rcall('PEXPIRE', limiterKey, tonumber(rate[2]) or 1000)
  end
  if rateTtl == 0 and tonumber(rcall('GET', limiterKey)) >= rateMax then rateTtl = rcall('PTTL', limiterKey) end
end
-- wake the next idle worker only when something is left for it
if #taken > 0 and (rcall('LLEN', waitKey) > 0 or rcall('ZCARD', prioKey) > 0) then
  rcall('ZADD', markerKey, 0, '0')
end
out[1] = nextDelayed()
out[2] = rateTtl
if nOut == 3 then out[3] = nil end
return out
