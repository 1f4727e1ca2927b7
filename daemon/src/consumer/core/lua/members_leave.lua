-- daemon/src/consumer/core/lua/members_leave.lua - a consumer leaves the set of consumers sharing a
-- queue's partitions; a script by itself.
-- KEYS: members. ARGV: identity.
return redis.call('ZREM', KEYS[1], ARGV[1])
