-- daemon/src/consumer/core/lua/helpers.lua - what every consumer BullMQ script starts with, after
-- QUEUE_KEY_NAMES (the names of bullmq::QueueKeyNames(), common/bullmq/queue_keys.hpp, as a Lua set)
-- and the shared prelude (common/bullmq/lua/prelude.lua: rcall, checkType, queueMeta, isBlocked,
-- eventsMaxLen); daemon/src/consumer/core/bullmq_scripts.cpp assembles every script.
-- Conventions shared by every script: ARGV[1] is the queue base "<prefix>:<queue>:" (job keys are
-- base .. id, as BullMQ builds them), ARGV[2] the client's wall clock in ms (BullMQ uses the
-- worker's clock for processedOn/finishedOn/delayed scores: docs/protocols/bullmq.md, 'The clock';
-- empty: Redis's clock, for a fetch that waited in the pipeline behind the consumer's BZPOPMIN).
-- Fixed keys are declared in KEYS so a cluster with a hash-tagged prefix routes them; job keys
-- share the tag through the base.
-- nowMs: ARGV[2] as the client sent it (or Redis's clock). Timestamps go to redis.call as that string: a Lua number
-- is formatted with sprintf("%.17g") on its way into every command, which showed up in profiles.
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
