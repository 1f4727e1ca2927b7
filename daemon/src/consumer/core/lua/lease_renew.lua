-- daemon/src/consumer/core/lua/lease_renew.lua - renews a partition's lease while it is ours; a script
-- by itself.
-- KEYS: lease. ARGV: holder (identity and process token) ttlMs. Returns 1 (renewed) or 0 (not ours).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
