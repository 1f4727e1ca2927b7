// daemon/src/consumer/core/bullmq_scripts.cpp - Lua sources of the consumer's BullMQ transitions.
//
// Conventions shared by every script: ARGV[1] is the queue base "<prefix>:<queue>:" (job keys are
// base .. id, as BullMQ builds them), ARGV[2] the client's wall clock in ms (BullMQ uses the
// worker's clock for processedOn/finishedOn/delayed scores: docs/protocols/bullmq.md, 'The clock';
// empty: Redis's clock, for a fetch that waited in the pipeline behind the consumer's BZPOPMIN).
// Fixed keys are declared in KEYS so a cluster with a hash-tagged prefix routes them; job keys
// share the tag through the base.
#include "consumer/core/bullmq_scripts.hpp"

#include "common/bullmq/lua_prelude.hpp"
#include "common/bullmq/queue_keys.hpp"

namespace chat_outboxd {

namespace {

// Helpers used by every consumer script, after the shared prelude (bullmq::kLuaPrelude: rcall,
// checkType, queueMeta, isBlocked, eventsMaxLen).
// nowMs: ARGV[2] as the client sent it (or Redis's clock). Timestamps go to redis.call as that string: a Lua number
// is formatted with sprintf("%.17g") on its way into every command, which showed up in profiles.
const char kCommon[] = R"LUA(
local base = ARGV[1]
local nowMs = ARGV[2]
if nowMs == '' then -- kRedisClock: the call waited behind a BZPOPMIN, so the client's clock would be stale
  local t = rcall('TIME')
  nowMs = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
end
local now = tonumber(nowMs)
-- checkLease(key, holder): with a holder (a consumer sharing partitions by leases), the script runs
-- only while the partition's lease holds exactly that value; the error leaves Redis untouched
local function checkLease(key, holder)
  if holder ~= '' and redis.pcall('GET', key) ~= holder then
    error({err = 'NOLEASE the lease ' .. key .. ' is not held by ' .. holder})
  end
end
-- checkTypes({key, ...}): each fixed key a script touches must be absent or of its own type
-- (checkType). Every script runs it before its first write, and every later command acts on a checked
-- key (or reads a job's key with pcall), so a script that fails leaves Redis as it was: Redis does
-- not undo a script's writes.
local function checkTypes(keys)
  for _, key in ipairs(keys) do checkType(key) end
end
-- checkNumber: INCR/INCRBY on these keys must not fail half-way through a script
local function checkNumber(key)
  local v = rcall('GET', key)
  if v and not tonumber(v) then error({err = 'BADQUEUE queue key ' .. key .. ' holds no number'}) end
end
-- namesQueueKey: an id that is one of the queue's own key names (common/bullmq/queue_keys.hpp) is
-- never a job: its "job key" is one of the queue's structures, so it is not touched
local function namesQueueKey(id) return QUEUE_KEY_NAMES[id] == true end
-- addPrioritized puts id in BullMQ's prioritized set: priority in the high bits, then the queue's
-- counter, so jobs of one priority keep the order they came in
local function addPrioritized(prioKey, pcKey, prio, id)
  local pc = rcall('INCR', pcKey)
  rcall('ZADD', prioKey, prio * 4294967296 + (pc % 4294967296), id)
end
local sideSuffixes = {':logs', ':lock', ':dependencies', ':processed', ':failed', ':unsuccessful'}
-- chunked runs cmd [key] items... in slices Lua's unpack can take
local function chunked(cmd, key, items)
  for i = 1, #items, 1000 do
    if key then
      rcall(cmd, key, unpack(items, i, math.min(i + 999, #items)))
    else
      rcall(cmd, unpack(items, i, math.min(i + 999, #items)))
    end
  end
end
-- removeJobs deletes many jobs' keys with a few DELs (one AOF entry each, not one per job). A job
-- seldom has any of its side keys (logs, flows, a lock), and a DEL goes to the AOF with every key
-- it names, found or not, so they are looked for first: EXISTS is a read and is not written.
local function removeJobs(ids)
  local keys, side = {}, {}
  for _, id in ipairs(ids) do
    local jobKey = base .. id
    keys[#keys + 1] = jobKey
    for _, suffix in ipairs(sideSuffixes) do side[#side + 1] = jobKey .. suffix end
  end
  chunked('DEL', nil, keys)
  for i = 1, #side, 1000 do
    local last = math.min(i + 999, #side)
    if rcall('EXISTS', unpack(side, i, last)) > 0 then rcall('DEL', unpack(side, i, last)) end
  end
end
)LUA";

// Finishing (complete, fail, retry) checks the token first: a job whose lock expired or moved to
// another worker is left alone and reported, never finished twice (docs/protocols/bullmq.md,
// 'Locks and tokens'). Per job that is one command, the HMGET that also reads what the script
// needs from the hash; the locks are read with one MGET and the ids leave active with one LTRIM
// when they are its right end, as they are while one consumer drains in order (else one LREM each).
// The lock keys and the stalled-set entries of the jobs taken are removed once at the end
// (releaseLocks). Within one script nobody can tell the difference from BullMQ's per-job order.
const char kFinishCommon[] = R"LUA(
local takenLocks, takenIds = {}, {}
-- takeLocks checks the jobs whose id and token are ARGV[i], ARGV[i + 1] for i = first, first + stride...
-- Returns per job a status (0 taken, -1 missing, -2 lock gone, -6 lock taken by another,
-- -3 not active) and, for a taken job, HMGET of processedOn (set by every fetch: it tells a missing
-- hash) and then `fields`.
local function takeLocks(first, stride, activeKey, fields)
  local lockKeys, n = {}, 0
  for i = first, #ARGV, stride do
    n = n + 1
    lockKeys[n] = base .. ARGV[i] .. ':lock'
  end
  local locks = {}
  for i = 1, n, 1000 do
    local part = rcall('MGET', unpack(lockKeys, i, math.min(i + 999, n)))
    for k = 1, #part do locks[i + k - 1] = part[k] end
  end
  local status, hashes, ours, nOurs = {}, {}, {}, 0
  local j = 0
  for i = first, #ARGV, stride do
    j = j + 1
    local id, lock = ARGV[i], locks[j]
    local jobKey = base .. id
    local st = -1
    if lock == ARGV[i + 1] then
      -- pcall: a key that is no hash (never one of our jobs) reads as missing instead of failing
      local h = redis.pcall('HMGET', jobKey, 'processedOn', unpack(fields))
      if not h.err and (h[1] or rcall('EXISTS', jobKey) == 1) then
        st = 0
        hashes[j] = h
        takenLocks[#takenLocks + 1] = lockKeys[j]
        takenIds[#takenIds + 1] = id
        nOurs = nOurs + 1
        ours[nOurs] = j
      end
    elseif rcall('EXISTS', jobKey) == 1 then
      st = lock and -6 or -2
    end
    status[j] = st
  end
  if nOurs > 0 then
    -- active holds the oldest on the right, and jobs are finished in the order they were taken
    local tail = rcall('LRANGE', activeKey, -nOurs, -1)
    local whole = #tail == nOurs
    for k = 1, nOurs do
      if not whole then break end
      whole = tail[nOurs - k + 1] == ARGV[first + (ours[k] - 1) * stride]
    end
    if whole then
      rcall('LTRIM', activeKey, 0, -(nOurs + 1))
    else
      for k = 1, nOurs do
        local jk = ours[k]
        if rcall('LREM', activeKey, -1, ARGV[first + (jk - 1) * stride]) == 0 then status[jk] = -3 end
      end
    end
  end
  return status, hashes
end
local function releaseLocks(stalledKey)
  chunked('DEL', nil, takenLocks)
  chunked('SREM', stalledKey, takenIds)
end
local function trimFinished(setKey, keepCount, keepAge)
  if keepAge > 0 then
    local old = rcall('ZRANGEBYSCORE', setKey, 0, now - keepAge * 1000, 'LIMIT', 0, 1000)
    removeJobs(old)
    chunked('ZREM', setKey, old)
  end
  if keepCount > 0 then
    local extra = rcall('ZREVRANGE', setKey, keepCount, -1)
    removeJobs(extra)
    if #extra > 0 then rcall('ZREMRANGEBYRANK', setKey, 0, -(keepCount + 1)) end
  end
end
-- deid: the job's `deid` field (its deduplication id), if any
local function dropDedupKey(id, deid)
  if deid then
    local dk = base .. 'de:' .. deid
    if rcall('PTTL', dk) == -1 and rcall('GET', dk) == id then rcall('DEL', dk) end
  end
end
local function drainedEvent(waitKey, activeKey, prioKey, eventsKey)
  if rcall('LLEN', waitKey) == 0 and rcall('LLEN', activeKey) == 0 and
     rcall('ZCARD', prioKey) == 0 then
    rcall('XADD', eventsKey, '*', 'event', 'drained')
  end
end
)LUA";

// KEYS: wait active prioritized delayed meta events marker pc limiter lease
// ARGV: base now tokenPrefix firstN lockMs maxJobs workerName leaseHolder
// A leaseHolder (not empty) fences the fetch: when the lease key does not hold exactly that value,
// nothing is taken and the reply is the error NOLEASE (a consumer whose partition went to another
// takes no job, even a fetch that waited behind its BZPOPMIN while the process was paused).
// Returns {nextDelayedDueMs, rateLimitedForMs} when nothing was taken, else
// {nextDelayedDueMs, rateLimitedForMs, {field names}, id, token, {values of those fields}, id, ...}
//
// Redis's time per job bounds every consumer's drain rate, and with appendonly each write command
// costs its own AOF entry, so the list moves are one command per batch (LRANGE/LTRIM, one LPUSH)
// and a job's hash changes are one HSET. The result is what RPOPLPUSH per job would leave.
// Only the fields the consumer reads come back (HMGET, names once per reply): HGETALL returned
// the whole hash, which Lua then walked twice and Redis converted twice.
const char kFetch[] = R"LUA(
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
)LUA";

// KEYS: active completed events meta stalled wait prioritized
// ARGV: base now, then per job: id token returnvalueJSON keepCount keepAgeSeconds
// Returns one status per job: 0 done, -1 missing, -2 lock gone, -6 lock taken by another, -3 not active
//
// The writes that need not be per job (the completed set, removals, trimming, and takeLock's lock
// keys and stalled entries) are gathered and made once per batch.
const char kComplete[] = R"LUA(
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
)LUA";

// KEYS: active failed events meta stalled wait prioritized
// ARGV: base now, then per job: id token reason stacktraceJSON keepCount keepAgeSeconds attempts
const char kFail[] = R"LUA(
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
)LUA";

// KEYS: active delayed events meta stalled wait prioritized marker pc
// ARGV: base now, then per job: id token reason stacktraceJSON delayMs lifo(0/1)
const char kRetry[] = R"LUA(
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
)LUA";

// KEYS: stalled
// ARGV: base now lockMs, then per job: id token. Returns 1 (renewed) or 0 (lost) per job.
const char kExtend[] = R"LUA(
checkTypes({KEYS[1]})
local out = {}
for i = 4, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local lockKey = base .. id .. ':lock'
  if redis.pcall('GET', lockKey) == token then
    rcall('SET', lockKey, token, 'PX', ARGV[3])
    rcall('SREM', KEYS[1], id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
)LUA";

// KEYS: stalled stalled-check active wait events meta marker
// ARGV: base now stalledIntervalMs maxStalledCount. Returns the requeued ids.
// Requeues in queue order: active holds the newest on the left, and wait is consumed from the
// right, so walking active left to right and RPUSHing leaves the oldest job next in line.
const char kStalled[] = R"LUA(
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
)LUA";

// KEYS: active wait events meta marker stalled lease
// ARGV: base now tokenPrefix ("<identity>:") takeover(0/1) leaseHolder
// Returns the requeued ids, oldest last.
// takeover 1 (a consumer that has just acquired the partition's lease) also requeues every active
// job without a lock and every job locked by any chat-outboxd (tokens "<identity>:<run>:<n>", two
// ':'; a bullmq Worker's are "<uuid>:<n>"): they were fetched by an earlier holder of the lease,
// so they come before anything this holder will fetch. The lease fence as in the fetch.
const char kRecover[] = R"LUA(
local activeKey, waitKey, eventsKey, metaKey, markerKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
checkTypes({activeKey, waitKey, eventsKey, metaKey, markerKey, stalledKey})
checkLease(KEYS[7], ARGV[5])
local qMeta = queueMeta(metaKey)
local prefix, takeover = ARGV[3], ARGV[4] == '1'
local function ours(owner)
  if owner == false then return takeover end -- no lock: nobody works it
  if type(owner) ~= 'string' then return false end -- a lock key of another type is nobody's lock
  if string.sub(owner, 1, #prefix) == prefix then return true end
  local _, colons = string.gsub(owner, ':', '')
  return takeover and colons == 2
end
local out = {}
local active = rcall('LRANGE', activeKey, 0, -1)
for _, id in ipairs(active) do
  local lockKey = base .. id .. ':lock'
  local owner = redis.pcall('GET', lockKey)
  if ours(owner) then
    rcall('DEL', lockKey)
    rcall('LREM', activeKey, 1, id)
    rcall('SREM', stalledKey, id)
    rcall('RPUSH', waitKey, id)
    rcall('XADD', eventsKey, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
    out[#out + 1] = id
  end
end
if #out > 0 and not isBlocked(qMeta, activeKey) then rcall('ZADD', markerKey, 0, '0') end
return out
)LUA";

// Prelude declares QUEUE_KEY_NAMES, the names of bullmq::QueueKeyNames() (one list, one owner), as a
// Lua set, then the prelude every chat_outbox script shares, then the consumer's own helpers.
std::string
Prelude()
{
	std::string names = "local QUEUE_KEY_NAMES = {";
	for (std::string_view name : chat_outbox::bullmq::QueueKeyNames())
		names.append("['").append(name).append("'] = true, ");
	return names + "}\n" + chat_outbox::bullmq::kLuaPrelude + kCommon;
}

LuaScript
Make(const char *name, std::string source)
{
	return chat_outbox::MakeRedisScript(name, std::move(source));
}

} // namespace

const LuaScript &
FetchScript()
{
	static const LuaScript s = Make("fetch", Prelude() + kFetch);
	return s;
}

const LuaScript &
CompleteScript()
{
	static const LuaScript s = Make("complete", Prelude() + kFinishCommon + kComplete);
	return s;
}

const LuaScript &
FailScript()
{
	static const LuaScript s = Make("fail", Prelude() + kFinishCommon + kFail);
	return s;
}

const LuaScript &
RetryScript()
{
	static const LuaScript s = Make("retry", Prelude() + kFinishCommon + kRetry);
	return s;
}

const LuaScript &
ExtendLocksScript()
{
	static const LuaScript s = Make("extend-locks", Prelude() + kExtend);
	return s;
}

const LuaScript &
StalledCheckScript()
{
	static const LuaScript s = Make("stalled-check", Prelude() + kStalled);
	return s;
}

const LuaScript &
RecoverIdentityScript()
{
	static const LuaScript s = Make("recover-identity", Prelude() + kRecover);
	return s;
}

} // namespace chat_outboxd
