-- daemon/src/consumer/core/lua/finish_helpers.lua - what finishing (complete.lua, fail.lua, retry.lua)
-- shares, after helpers.lua.
-- Finishing checks the token first: a job whose lock expired or moved to another worker is left alone
-- and reported, never finished twice (docs/protocols/bullmq.md, 'Locks and tokens'). Per job that is
-- one command, the HMGET that also reads what the script needs from the hash; the locks are read with
-- one MGET and the ids leave active with one LTRIM when they are its right end, as they are while one
-- consumer drains in order (else one LREM each). The lock keys and the stalled-set entries of the jobs
-- taken are removed once at the end (releaseLocks). Within one script nobody can tell the difference
-- from BullMQ's per-job order.
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
