-- daemon/src/gateway/conversation/lua/chat_presence.lua - a chat's presence (daemon/src/gateway/conversation/presence.cpp).
-- KEYS[1] the chat's members (sorted set, score = expiry), KEYS[2] its users (hash "<service>\t<sub>"
-- -> "<members>\t<one of their members>"). ARGV: now (ms), expiry (ms), op (add, rem or none), member,
-- channel, service, keys' ttl (ms). Drops expired members and applies op, keeping each user's count of
-- members; a user whose count goes from 0 to 1 or back is published, naming one of their members.
-- Every step costs O(1) per member changed, whatever the chat's size; returns the users' values.
local head = '{"event":"presence","service":' .. cjson.encode(ARGV[6]) .. ',"data":{"member":'
local function user_of(m)
  local a = string.find(m, '\t', 1, true)
  local b = a and string.find(m, '\t', a + 1, true)
  if b then return string.sub(m, 1, b - 1) end
end
local function count(m, d)
  local u = user_of(m)
  if not u then return end
  local v = redis.call('HGET', KEYS[2], u)
  local n = (v and tonumber(string.match(v, '^(%d+)')) or 0) + d
  if n <= 0 then
    redis.call('HDEL', KEYS[2], u)
    if v then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":false}}') end
  else
    redis.call('HSET', KEYS[2], u, n .. '\t' .. m)
    if n == 1 and d > 0 then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":true}}') end
  end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do
  redis.call('ZREM', KEYS[1], m)
  count(m, -1)
end
if ARGV[3] == 'add' then
  if redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4]) == 1 then count(ARGV[4], 1) end
elseif ARGV[3] == 'rem' then
  if redis.call('ZREM', KEYS[1], ARGV[4]) == 1 then count(ARGV[4], -1) end
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return redis.call('HVALS', KEYS[2])
