-- daemon/src/gateway/conversation/lua/chat_presence.lua - a chat's presence (daemon/src/gateway/conversation/presence.cpp).
-- KEYS[1] the chat's members (sorted set, score = expiry), KEYS[2] its users (hash "<service>\t<sub>"
-- -> "<members>\t<one of their members>"), KEYS[3] its users in order (sorted set, score 0, member
-- "<service>\t<sub>": what pages are read from). ARGV: now (ms), expiry (ms), op (add, rem or none), member,
-- channel, service, keys' ttl (ms), page size (0: no page), after (the page starts past this user; "" from the first).
-- Drops expired members and applies op, keeping each user's count of members; a user whose count goes from 0
-- to 1 or back is published, naming one of their members and the chat's online count after it.
-- Every step costs O(log n) per member changed, plus the page, whatever the chat's size.
-- Returns {online users, the page's last user if more follow ("" otherwise), the page's users' values...}.
local head = '{"event":"presence","service":' .. cjson.encode(ARGV[6]) .. ',"data":{"member":'
local function user_of(m)
  local a = string.find(m, '\t', 1, true)
  local b = a and string.find(m, '\t', a + 1, true)
  if b then return string.sub(m, 1, b - 1) end
end
local function publish(m, present)
  redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":' .. present .. ',"online":' .. redis.call('HLEN', KEYS[2]) .. '}}')
end
local function count(m, d)
  local u = user_of(m)
  if not u then return end
  local v = redis.call('HGET', KEYS[2], u)
  local n = (v and tonumber(string.match(v, '^(%d+)')) or 0) + d
  if n <= 0 then
    redis.call('HDEL', KEYS[2], u)
    redis.call('ZREM', KEYS[3], u)
    if v then publish(m, 'false') end
  else
    redis.call('HSET', KEYS[2], u, n .. '\t' .. m)
    redis.call('ZADD', KEYS[3], 0, u)
    if n == 1 and d > 0 then publish(m, 'true') end
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
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
  return {0, ''}
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[7]) end
local out = {redis.call('HLEN', KEYS[2]), ''}
local size = tonumber(ARGV[8]) or 0
if size > 0 then
  local users = redis.call('ZRANGEBYLEX', KEYS[3], ARGV[9] == '' and '-' or '(' .. ARGV[9], '+', 'LIMIT', 0, size + 1)
  if #users > size then
    users[size + 1] = nil
    out[2] = users[size]
  end
  -- HMGET in chunks: unpack takes at most a few thousand values
  for from = 1, #users, 1000 do
    for _, v in ipairs(redis.call('HMGET', KEYS[2], unpack(users, from, math.min(from + 999, #users)))) do
      if v then out[#out + 1] = v end
    end
  end
end
return out
