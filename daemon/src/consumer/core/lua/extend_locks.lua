-- daemon/src/consumer/core/lua/extend_locks.lua - renews the locks of the jobs the consumer works
-- (BullMQ's extendLocks), after helpers.lua.
-- KEYS: stalled
-- ARGV: base now lockMs, then per job: id token. Returns 1 (renewed) or 0 (lost) per job.
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
