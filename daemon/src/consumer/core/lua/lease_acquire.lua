-- daemon/src/consumer/core/lua/lease_acquire.lua - takes or renews a partition's lease; a script by
-- itself.
-- KEYS: lease. ARGV: holder (the identity and the process token, daemon/src/consumer/core/lease.hpp) ttlMs. Returns 1 (ours), else minus the ms the other's lease has left.
local v = redis.call('GET', KEYS[1])
if v == false then
  redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
  return 1
end
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then left = 0 end
return -left
