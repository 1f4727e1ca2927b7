-- daemon/src/gateway/conversation/lua/keep_highest.lua - the reads and shown hashes keep each field's highest entry
-- (daemon/src/gateway/conversation/receipts.cpp): a report that arrives late (another gateway, a retry) never
-- lowers it.
-- KEYS[1] the hash; ARGV: field, entry JSON, its seq, and the channel and envelope to publish when the
-- entry moved (none: ARGV[4] empty). Returns 1 (stored) or 0 (an entry as high was there).
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local ok, d = pcall(cjson.decode, cur)
  if ok and type(d) == 'table' and tonumber(d.seq) and tonumber(d.seq) >= tonumber(ARGV[3]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 1
