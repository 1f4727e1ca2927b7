-- common/bullmq/lua/prelude.lua - the Lua every chat_outbox BullMQ script starts with
-- (common/bullmq/lua_prelude.hpp, its one owner, puts it first): the rules the relay's batch add
-- (common/relay/lua/batch_add.lua) and the consumer's scripts (daemon/src/consumer/core/lua/) share
-- about a queue's keys and its meta hash, so all of them read a queue the same way: which type each
-- key must have, which meta settings must be numbers, how long the events stream may grow, and when a
-- queue takes no new work.
-- It defines these locals:
--   rcall                      redis.call
--   KEY_TYPE                   the Redis type BullMQ gives each queue key, by name (wait = list, ...)
--   checkType(key)             refuses the script when the queue key `key` ("<prefix>:<queue>:<name>")
--                              exists with another type than KEY_TYPE[name]
--   queueMeta(metaKey)         {maxEvents, paused, concurrency} from meta, in one HMGET, refusing
--                              the script when opts.maxLenEvents or concurrency is no number
--   isBlocked(meta, activeKey) the queue is paused, or holds `concurrency` active jobs
--   eventsMaxLen(metaKey, meta) the events stream's cap, writing BullMQ's default when missing
-- The checks come before a script's first write: Redis does not undo the writes of a script that
-- fails, so a refused script leaves Redis as it was. A refusal is an error starting "BADQUEUE".
-- rcall: a local is found faster than the global `redis` table's field, on every call
local rcall = redis.call
-- KEY_TYPE: the Redis type BullMQ gives each of a queue's keys our scripts touch, and the relay's
-- mark beside them (common/relay/lua/batch_add.lua)
local KEY_TYPE = {wait = 'list', active = 'list', paused = 'list', meta = 'hash', events = 'stream',
  marker = 'zset', completed = 'zset', failed = 'zset', delayed = 'zset', prioritized = 'zset',
  ['waiting-children'] = 'zset', stalled = 'set', pc = 'string', limiter = 'string', ['relay-mark'] = 'string'}
-- checkType: a queue key must be absent or of the type BullMQ gives its name, the part after the
-- last ':' (neither the prefix nor the queue name has one)
local function checkType(key)
  local want = KEY_TYPE[string.match(key, '[^:]*$')] or error('no type known for queue key ' .. key)
  local t = rcall('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    error({err = 'BADQUEUE queue key ' .. key .. ' holds a ' .. t .. ', not a ' .. want})
  end
end
-- queueMeta: the meta settings that bound the events stream and decide whether workers may take
-- jobs, read once; one that is no number would make a later command fail half-way
local function queueMeta(metaKey)
  local m = rcall('HMGET', metaKey, 'opts.maxLenEvents', 'paused', 'concurrency')
  if (m[1] and not tonumber(m[1])) or (m[3] and not tonumber(m[3])) then
    error({err = 'BADQUEUE queue key ' .. metaKey .. ' holds a maxLenEvents or concurrency that is no number'})
  end
  return {maxEvents = m[1], paused = m[2] ~= false, concurrency = tonumber(m[3])}
end
-- isBlocked: a paused queue, or one with `concurrency` active jobs, gives no worker a job, so no
-- marker may wake one
local function isBlocked(meta, activeKey)
  return meta.paused or (meta.concurrency ~= nil and rcall('LLEN', activeKey) >= meta.concurrency)
end
-- eventsMaxLen: the events stream's approximate cap (XADD/XTRIM MAXLEN ~), opts.maxLenEvents,
-- written as BullMQ's default 10000 when missing. That is a write: call it after the checks.
local function eventsMaxLen(metaKey, meta)
  if not meta.maxEvents then
    meta.maxEvents = '10000'
    rcall('HSET', metaKey, 'opts.maxLenEvents', meta.maxEvents)
  end
  return meta.maxEvents
end
