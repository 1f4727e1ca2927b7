-- daemon/src/consumer/core/lua/members_heartbeat.lua - a consumer's heartbeat in the set of consumers
-- sharing a queue's partitions (daemon/src/consumer/core/partition_calls.cpp); a script by itself.
-- KEYS: members layout. ARGV: identity memberTtlMs. Scores are expiry times on Redis's clock, so
-- every consumer judges liveness by one clock. The ZSET expires with its last member.
-- Returns {the members, the layout key's value}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return {redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('GET', KEYS[2])}
