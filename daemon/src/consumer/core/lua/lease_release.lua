-- daemon/src/consumer/core/lua/lease_release.lua - gives a partition's lease up while it is ours; a
-- script by itself.
-- KEYS: lease. ARGV: holder (identity and process token). Returns 1 (released) or 0 (not ours).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
