// daemon/src/core/bullmq_scripts.cpp - Lua sources of the consumer's BullMQ transitions.
//
// Conventions shared by every script: ARGV[1] is the queue base "<prefix>:<queue>:" (job keys are
// base .. id, as BullMQ builds them), ARGV[2] the client's wall clock in ms (BullMQ uses the
// worker's clock for processedOn/finishedOn/delayed scores, §14.15). Fixed keys are declared in
// KEYS so a cluster with a hash-tagged prefix routes them; job keys share the tag through the base.
#include "core/bullmq_scripts.hpp"

#include <openssl/evp.h>

namespace chat_outboxd {

namespace {

// Helpers used by every script that writes events or finishes jobs.
const char kCommon[] = R"LUA(
local base = ARGV[1]
local now = tonumber(ARGV[2])
local function maxEvents(metaKey)
  local m = tonumber(redis.call('HGET', metaKey, 'opts.maxLenEvents'))
  if not m then
    m = 10000
    redis.call('HSET', metaKey, 'opts.maxLenEvents', m)
  end
  return m
end
local function isBlocked(metaKey, activeKey)
  local m = redis.call('HMGET', metaKey, 'paused', 'concurrency')
  if m[1] then return true end
  if m[2] and redis.call('LLEN', activeKey) >= tonumber(m[2]) then return true end
  return false
end
local jobSuffixes = {'', ':logs', ':lock', ':dependencies', ':processed', ':failed', ':unsuccessful'}
-- chunked runs cmd [key] items... in slices Lua's unpack can take
local function chunked(cmd, key, items)
  for i = 1, #items, 1000 do
    if key then
      redis.call(cmd, key, unpack(items, i, math.min(i + 999, #items)))
    else
      redis.call(cmd, unpack(items, i, math.min(i + 999, #items)))
    end
  end
end
-- removeJobs deletes many jobs' keys with a few DELs (one AOF entry each, not one per job)
local function removeJobs(ids)
  local keys = {}
  for _, id in ipairs(ids) do
    for _, suffix in ipairs(jobSuffixes) do keys[#keys + 1] = base .. id .. suffix end
  end
  chunked('DEL', nil, keys)
end
)LUA";

// Finishing (complete, fail, retry) checks the token first: a job whose lock expired or moved to
// another worker is left alone and reported, never finished twice (§14.9). The lock keys and the
// stalled-set entries of the jobs taken are removed once at the end (releaseLocks), one command
// each per call instead of per job: within one script nobody can tell the difference.
const char kFinishCommon[] = R"LUA(
local takenLocks, takenIds = {}, {}
local function takeLock(jobKey, id, token, activeKey)
  if redis.call('EXISTS', jobKey) == 0 then return -1 end
  local lock = redis.call('GET', jobKey .. ':lock')
  if not lock then return -2 end
  if lock ~= token then return -6 end
  takenLocks[#takenLocks + 1] = jobKey .. ':lock'
  takenIds[#takenIds + 1] = id
  if redis.call('LREM', activeKey, -1, id) == 0 then return -3 end
  return 0
end
local function releaseLocks(stalledKey)
  chunked('DEL', nil, takenLocks)
  chunked('SREM', stalledKey, takenIds)
end
local function trimFinished(setKey, keepCount, keepAge)
  if keepAge > 0 then
    local old = redis.call('ZRANGEBYSCORE', setKey, 0, now - keepAge * 1000, 'LIMIT', 0, 1000)
    removeJobs(old)
    chunked('ZREM', setKey, old)
  end
  if keepCount > 0 then
    local extra = redis.call('ZREVRANGE', setKey, keepCount, -1)
    removeJobs(extra)
    if #extra > 0 then redis.call('ZREMRANGEBYRANK', setKey, 0, -(keepCount + 1)) end
  end
end
-- deid: the job's `deid` field (its deduplication id), if any
local function dropDedupKey(id, deid)
  if deid then
    local dk = base .. 'de:' .. deid
    if redis.call('PTTL', dk) == -1 and redis.call('GET', dk) == id then redis.call('DEL', dk) end
  end
end
local function drainedEvent(waitKey, activeKey, prioKey, eventsKey)
  if redis.call('LLEN', waitKey) == 0 and redis.call('LLEN', activeKey) == 0 and
     redis.call('ZCARD', prioKey) == 0 then
    redis.call('XADD', eventsKey, '*', 'event', 'drained')
  end
end
)LUA";

// KEYS: wait active prioritized delayed meta events marker pc limiter
// ARGV: base now tokenPrefix firstN lockMs maxJobs workerName
// Returns {nextDelayedDueMs, rateLimitedForMs, {id, token, {hash field/value...}}...}
//
// Redis's time per job bounds every consumer's drain rate, and with appendonly each write command
// costs its own AOF entry, so the list moves are one command per batch (LRANGE/LTRIM, one LPUSH)
// and a job's hash changes are one HSET. The result is what RPOPLPUSH per job would leave.
const char kFetch[] = R"LUA(
local waitKey, activeKey, prioKey, delayedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local metaKey, eventsKey, markerKey, pcKey, limiterKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local n = tonumber(ARGV[4])
local maxJobs = tonumber(ARGV[6])
local evMax = maxEvents(metaKey)
local meta = redis.call('HMGET', metaKey, 'paused', 'concurrency', 'max', 'duration')

-- promote delayed jobs that are due (our own retries and producers' `delay` need it)
local due = redis.call('ZRANGEBYSCORE', delayedKey, 0, (now + 1) * 4096 - 1, 'LIMIT', 0, 1000)
for _, id in ipairs(due) do
  redis.call('ZREM', delayedKey, id)
  local jobKey = base .. id
  local prio = tonumber(redis.call('HGET', jobKey, 'priority') or '0') or 0
  if prio == 0 then
    redis.call('LPUSH', waitKey, id)
  else
    local pc = redis.call('INCR', pcKey)
    redis.call('ZADD', prioKey, prio * 4294967296 + (pc % 4294967296), id)
  end
  redis.call('HSET', jobKey, 'delay', 0)
  redis.call('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'waiting', 'jobId', id, 'prev', 'delayed')
end
local blocked = isBlocked(metaKey, activeKey)
if #due > 0 and not blocked then redis.call('ZADD', markerKey, 0, '0') end

local function nextDelayed()
  local first = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
  if first[2] then return math.floor(tonumber(first[2]) / 4096) end
  return 0
end
if blocked then return {nextDelayed(), 0} end

local limit = maxJobs
if meta[2] then limit = math.min(limit, tonumber(meta[2]) - redis.call('LLEN', activeKey)) end
local rateMax = tonumber(meta[3])
local rateTtl = 0
if rateMax then
  local used = tonumber(redis.call('GET', limiterKey) or '0')
  local ttl = redis.call('PTTL', limiterKey)
  if used >= rateMax and ttl > 0 then
    limit = 0
    rateTtl = ttl
  elseif ttl > 0 then
    limit = math.min(limit, rateMax - used)
  else
    limit = math.min(limit, rateMax)
  end
end

-- ids in the order RPOPLPUSH would take them: wait's right end first, then by priority
local ids = {}
if limit > 0 then
  local w = redis.call('LRANGE', waitKey, -limit, -1)
  if #w > 0 then
    redis.call('LTRIM', waitKey, 0, -(#w + 1))
    for i = #w, 1, -1 do ids[#ids + 1] = w[i] end
  end
  local want = limit - #ids
  if want > 0 then
    local p = redis.call('ZPOPMIN', prioKey, want)
    for i = 1, #p, 2 do ids[#ids + 1] = p[i] end
    if #p / 2 < want then redis.call('DEL', pcKey) end
  end
end

local out = {0, 0}
local taken, counted = {}, 0
for _, id in ipairs(ids) do
  local jobKey = base .. id
  -- a legacy marker, or an id without a hash, would be a phantom job (§14.3): dropped
  local fields = {}
  if string.sub(id, 1, 2) ~= '0:' then fields = redis.call('HGETALL', jobKey) end
  if #fields > 0 then
    local set, ats, defa = {processedOn = now, pb = ARGV[7]}, 0, false
    for i = 1, #fields, 2 do
      local f = fields[i]
      if f == 'ats' then ats = tonumber(fields[i + 1]) or 0 end
      if f == 'defa' then defa = true end
    end
    set.ats = ats + 1
    for i = 1, #fields, 2 do
      local v = set[fields[i]]
      if v ~= nil then fields[i + 1] = tostring(v); set[fields[i]] = nil end
    end
    for f, v in pairs(set) do fields[#fields + 1] = f; fields[#fields + 1] = tostring(v) end
    if not defa then counted = counted + 1 end
    local token = ARGV[3] .. n
    n = n + 1
    redis.call('SET', jobKey .. ':lock', token, 'PX', ARGV[5])
    redis.call('XADD', eventsKey, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting')
    redis.call('HSET', jobKey, 'processedOn', now, 'pb', ARGV[7], 'ats', ats + 1)
    taken[#taken + 1] = id
    out[#out + 1] = {id, token, fields}
  end
end
chunked('LPUSH', activeKey, taken)
if rateMax and counted > 0 then
  if redis.call('INCRBY', limiterKey, counted) == counted then
    redis.call('PEXPIRE', limiterKey, tonumber(meta[4]) or 1000)
  end
  if rateTtl == 0 and tonumber(redis.call('GET', limiterKey)) >= rateMax then rateTtl = redis.call('PTTL', limiterKey) end
end
-- wake the next idle worker only when something is left for it
if #taken > 0 and (redis.call('LLEN', waitKey) > 0 or redis.call('ZCARD', prioKey) > 0) then
  redis.call('ZADD', markerKey, 0, '0')
end
out[1] = nextDelayed()
out[2] = rateTtl
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
redis.call('XTRIM', eventsKey, 'MAXLEN', '~', maxEvents(metaKey))
local out = {}
local finished, removed = {}, {}
local policies, policyOrder = {}, {}
for i = 3, #ARGV, 5 do
  local id, token, rv = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local keepCount, keepAge = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local jobKey = base .. id
  local status = takeLock(jobKey, id, token, activeKey)
  if status == 0 then
    local h = redis.call('HMGET', jobKey, 'deid', 'atm')
    dropDedupKey(id, h[1])
    if keepCount ~= 0 then
      finished[#finished + 1] = now
      finished[#finished + 1] = id
      redis.call('HSET', jobKey, 'atm', (tonumber(h[2]) or 0) + 1, 'returnvalue', rv, 'finishedOn', now)
      local p = keepCount .. ':' .. keepAge
      if not policies[p] then
        policies[p] = {keepCount, keepAge}
        policyOrder[#policyOrder + 1] = p
      end
    else
      removed[#removed + 1] = id
    end
    redis.call('XADD', eventsKey, '*', 'event', 'completed', 'jobId', id, 'returnvalue', rv, 'prev', 'active')
  end
  out[#out + 1] = status
end
releaseLocks(stalledKey)
chunked('ZADD', doneKey, finished)
removeJobs(removed)
for _, p in ipairs(policyOrder) do trimFinished(doneKey, policies[p][1], policies[p][2]) end
drainedEvent(KEYS[6], activeKey, KEYS[7], eventsKey)
return out
)LUA";

// KEYS: active failed events meta stalled wait prioritized
// ARGV: base now, then per job: id token reason stacktraceJSON keepCount keepAgeSeconds attempts
const char kFail[] = R"LUA(
local activeKey, failedKey, eventsKey, metaKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
redis.call('XTRIM', eventsKey, 'MAXLEN', '~', maxEvents(metaKey))
local out = {}
for i = 3, #ARGV, 7 do
  local id, token, reason, stack = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local keepCount, keepAge, attempts = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])
  local jobKey = base .. id
  local status = takeLock(jobKey, id, token, activeKey)
  if status == 0 then
    dropDedupKey(id, redis.call('HGET', jobKey, 'deid'))
    redis.call('HSET', jobKey, 'failedReason', reason, 'stacktrace', stack)
    redis.call('HDEL', jobKey, 'defa')
    local atm = redis.call('HINCRBY', jobKey, 'atm', 1)
    if keepCount ~= 0 then
      redis.call('ZADD', failedKey, now, id)
      redis.call('HSET', jobKey, 'finishedOn', now)
      trimFinished(failedKey, keepCount, keepAge)
    else
      removeJobs({id})
    end
    redis.call('XADD', eventsKey, '*', 'event', 'failed', 'jobId', id, 'failedReason', reason, 'prev', 'active')
    if atm >= attempts then
      redis.call('XADD', eventsKey, '*', 'event', 'retries-exhausted', 'jobId', id, 'attemptsMade', atm)
    end
  end
  out[#out + 1] = status
end
releaseLocks(stalledKey)
drainedEvent(KEYS[6], activeKey, KEYS[7], eventsKey)
return out
)LUA";

// KEYS: active delayed events meta stalled wait prioritized marker pc
// ARGV: base now, then per job: id token reason stacktraceJSON delayMs lifo(0/1)
const char kRetry[] = R"LUA(
local activeKey, delayedKey, eventsKey, metaKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local waitKey, prioKey, markerKey, pcKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local evMax = maxEvents(metaKey)
local out = {}
local woke = false
for i = 3, #ARGV, 6 do
  local id, token, reason, stack = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local delay, lifo = tonumber(ARGV[i + 4]), ARGV[i + 5] == '1'
  local jobKey = base .. id
  local status = takeLock(jobKey, id, token, activeKey)
  if status == 0 then
    redis.call('HSET', jobKey, 'failedReason', reason, 'stacktrace', stack)
    redis.call('HINCRBY', jobKey, 'atm', 1)
    if delay > 0 then
      local due = now + delay
      -- ×4096 leaves room for a sequence that keeps equal due times FIFO (§6.2, §14.13)
      local score = due * 4096
      local last = redis.call('ZREVRANGEBYSCORE', delayedKey, score + 4095, score, 'WITHSCORES', 'LIMIT', 0, 1)
      if last[2] then score = math.min(tonumber(last[2]) + 1, score + 4095) end
      redis.call('HSET', jobKey, 'delay', delay)
      redis.call('ZADD', delayedKey, score, id)
      redis.call('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'delayed', 'jobId', id, 'delay', due)
    else
      local prio = tonumber(redis.call('HGET', jobKey, 'priority') or '0') or 0
      if prio > 0 then
        local pc = redis.call('INCR', pcKey)
        redis.call('ZADD', prioKey, prio * 4294967296 + (pc % 4294967296), id)
      elseif lifo then
        redis.call('RPUSH', waitKey, id)
      else
        redis.call('LPUSH', waitKey, id)
      end
      redis.call('XADD', eventsKey, 'MAXLEN', '~', evMax, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
      woke = true
    end
  end
  out[#out + 1] = status
end
releaseLocks(stalledKey)
if woke and not isBlocked(metaKey, activeKey) then redis.call('ZADD', markerKey, 0, '0') end
local first = redis.call('ZRANGE', delayedKey, 0, 0, 'WITHSCORES')
if first[2] then redis.call('ZADD', markerKey, math.floor(tonumber(first[2]) / 4096), '1') end
return out
)LUA";

// KEYS: stalled
// ARGV: base now lockMs, then per job: id token. Returns 1 (renewed) or 0 (lost) per job.
const char kExtend[] = R"LUA(
local out = {}
for i = 4, #ARGV, 2 do
  local id, token = ARGV[i], ARGV[i + 1]
  local lockKey = base .. id .. ':lock'
  if redis.call('GET', lockKey) == token then
    redis.call('SET', lockKey, token, 'PX', ARGV[3])
    redis.call('SREM', KEYS[1], id)
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
if redis.call('EXISTS', checkKey) == 1 then return {} end
redis.call('SET', checkKey, now, 'PX', ARGV[3])
local maxStalled = tonumber(ARGV[4])
redis.call('XTRIM', eventsKey, 'MAXLEN', '~', maxEvents(metaKey))
local requeued = {}
local suspects = redis.call('SMEMBERS', stalledKey)
if #suspects > 0 then
  redis.call('DEL', stalledKey)
  local suspect = {}
  for _, id in ipairs(suspects) do
    if string.sub(id, 1, 2) == '0:' then redis.call('LREM', activeKey, 1, id) else suspect[id] = true end
  end
  local active = redis.call('LRANGE', activeKey, 0, -1)
  for _, id in ipairs(active) do
    local jobKey = base .. id
    if suspect[id] and redis.call('EXISTS', jobKey .. ':lock') == 0 then
      suspect[id] = nil
      redis.call('LREM', activeKey, 1, id)
      if redis.call('EXISTS', jobKey) == 1 then
        local stc = redis.call('HINCRBY', jobKey, 'stc', 1)
        if stc > maxStalled and redis.call('HEXISTS', jobKey, 'rjk') == 0 then
          redis.call('HSET', jobKey, 'defa', 'job stalled more than allowable limit')
        end
        redis.call('RPUSH', waitKey, id)
        redis.call('XADD', eventsKey, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
        redis.call('XADD', eventsKey, '*', 'event', 'stalled', 'jobId', id)
        requeued[#requeued + 1] = id
      end
    end
  end
  if #requeued > 0 and not isBlocked(metaKey, activeKey) then redis.call('ZADD', markerKey, 0, '0') end
end
local active = redis.call('LRANGE', activeKey, 0, -1)
for i = 1, #active, 5000 do
  redis.call('SADD', stalledKey, unpack(active, i, math.min(i + 4999, #active)))
end
return requeued
)LUA";

// KEYS: active wait events meta marker stalled
// ARGV: base now tokenPrefix ("<identity>:"). Returns the requeued ids, oldest last.
const char kRecover[] = R"LUA(
local activeKey, waitKey, eventsKey, metaKey, markerKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local prefix = ARGV[3]
local out = {}
local active = redis.call('LRANGE', activeKey, 0, -1)
for _, id in ipairs(active) do
  local lockKey = base .. id .. ':lock'
  local owner = redis.call('GET', lockKey)
  if owner and string.sub(owner, 1, #prefix) == prefix then
    redis.call('DEL', lockKey)
    redis.call('LREM', activeKey, 1, id)
    redis.call('SREM', stalledKey, id)
    redis.call('RPUSH', waitKey, id)
    redis.call('XADD', eventsKey, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
    out[#out + 1] = id
  end
end
if #out > 0 and not isBlocked(metaKey, activeKey) then redis.call('ZADD', markerKey, 0, '0') end
return out
)LUA";

LuaScript
Make(const char *name, std::string source)
{
	return LuaScript{name, source, Sha1Hex(source)};
}

} // namespace

std::string
Sha1Hex(const std::string &data)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr);
	static const char hex[] = "0123456789abcdef";
	std::string out;
	for (unsigned int i = 0; i < len; i++) {
		out.push_back(hex[md[i] >> 4]);
		out.push_back(hex[md[i] & 15]);
	}
	return out;
}

const LuaScript &
FetchScript()
{
	static const LuaScript s = Make("fetch", std::string(kCommon) + kFetch);
	return s;
}

const LuaScript &
CompleteScript()
{
	static const LuaScript s = Make("complete", std::string(kCommon) + kFinishCommon + kComplete);
	return s;
}

const LuaScript &
FailScript()
{
	static const LuaScript s = Make("fail", std::string(kCommon) + kFinishCommon + kFail);
	return s;
}

const LuaScript &
RetryScript()
{
	static const LuaScript s = Make("retry", std::string(kCommon) + kFinishCommon + kRetry);
	return s;
}

const LuaScript &
ExtendLocksScript()
{
	static const LuaScript s = Make("extend-locks", std::string(kCommon) + kExtend);
	return s;
}

const LuaScript &
StalledCheckScript()
{
	static const LuaScript s = Make("stalled-check", std::string(kCommon) + kStalled);
	return s;
}

const LuaScript &
RecoverIdentityScript()
{
	static const LuaScript s = Make("recover-identity", std::string(kCommon) + kRecover);
	return s;
}

} // namespace chat_outboxd
