-- daemon/src/consumer/core/lua/recover_identity.lua - requeues the active jobs an earlier run of this
-- consumer (or of a lease's earlier holder) left behind, after helpers.lua.
-- KEYS: active wait events meta marker stalled lease
-- ARGV: base now tokenPrefix ("<identity>:") takeover(0/1) leaseHolder
-- Returns the requeued ids, oldest last.
-- takeover 1 (a consumer that has just acquired the partition's lease) also requeues every active
-- job without a lock and every job locked by any chat-outboxd (tokens "<identity>:<run>:<n>", two
-- ':'; a bullmq Worker's are "<uuid>:<n>"): they were fetched by an earlier holder of the lease,
-- so they come before anything this holder will fetch. The lease fence as in fetch.lua.
local activeKey, waitKey, eventsKey, metaKey, markerKey, stalledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
checkTypes({activeKey, waitKey, eventsKey, metaKey, markerKey, stalledKey})
checkLease(KEYS[7], ARGV[5])
local qMeta = queueMeta(metaKey)
local prefix, takeover = ARGV[3], ARGV[4] == '1'
local function ours(owner)
  if owner == false then return takeover end -- no lock: nobody works it
  if type(owner) ~= 'string' then return false end -- a lock key of another type is nobody's lock
  if string.sub(owner, 1, #prefix) == prefix then return true end
  local _, colons = string.gsub(owner, ':', '')
  return takeover and colons == 2
end
local out = {}
local active = rcall('LRANGE', activeKey, 0, -1)
for _, id in ipairs(active) do
  local lockKey = base .. id .. ':lock'
  local owner = redis.pcall('GET', lockKey)
  if ours(owner) then
    rcall('DEL', lockKey)
    rcall('LREM', activeKey, 1, id)
    rcall('SREM', stalledKey, id)
    rcall('RPUSH', waitKey, id)
    rcall('XADD', eventsKey, '*', 'event', 'waiting', 'jobId', id, 'prev', 'active')
    out[#out + 1] = id
  end
end
if #out > 0 and not isBlocked(qMeta, activeKey) then rcall('ZADD', markerKey, 0, '0') end
return out
