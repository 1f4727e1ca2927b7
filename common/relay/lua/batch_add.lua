-- common/relay/lua/batch_add.lua - chat_outbox batch add, after the shared prelude
-- (common/bullmq/lua/prelude.lua), sent by common/relay/bullmq_batch_add.cpp. KEYS = wait, meta, events, marker, active, completed, failed, delayed,
-- prioritized, waiting-children, paused, layout, relay-mark, then one job hash per job.
-- ARGV = timestamp, layout expectation, mark expectation, new mark, then id, name, data, opts per job.
-- The layout expectation guards against relaying under a partition count the layout key no longer
-- says: '' checks nothing (a shard that does not hold the key), 'absent' wants the key absent,
-- '=' followed by a value wants the key to hold exactly that value. The raw values are compared; what
-- a value means is the relay's business. Any other value refuses the whole call, before any check
-- or write, with the error 'CHATOUTBOX_LAYOUT <the key's value, or nil>'.
-- The mark (docs/architecture.md, 'What Redis kept: the marks') is the state of the relay's cursor
-- after this batch, written in this call so that Redis holds it only with the jobs before it. The
-- mark expectation is what the relay's committed passes wrote or read there: '*' checks nothing, ''
-- wants no mark; a mark that differs (Redis lost writes, or a pass that wrote it rolled back) refuses
-- the whole call, before any write, with the error 'CHATOUTBOX_MARK', and the relay asks the
-- database what to send again. An
-- empty new mark leaves the key alone.
-- Returns per job 1 (created), 0 (duplicate: the job is in one of the queue's states) or a string:
-- why that job cannot be added (its key holds something else than a job hash); it is not written.
-- Every check that can fail runs before the first write, so a batch this script refuses (a queue
-- key of the wrong type) leaves Redis exactly as it was: Redis does not undo a script's writes.
-- Per job only what Queue.add leaves behind: the hash, `added` and `waiting` events; the ids go
-- onto `wait` with one LPUSH for the batch (same order as one LPUSH each, nobody can look in
-- between), and the `id` counter, which only auto-numbered adds need, is left alone.
-- Numbers go to rcall as strings: Lua formats a number argument with sprintf on every call,
-- which showed in Redis' profile at 500 jobs per call.
local nfixed = 13
local expected = ARGV[2]
if expected ~= '' then
  local v = rcall('GET', KEYS[12])
  if (v and '=' .. v or 'absent') ~= expected then
    return redis.error_reply('CHATOUTBOX_LAYOUT ' .. (v or 'nil'))
  end
end
if ARGV[3] ~= '*' or ARGV[4] ~= '' then
  checkType(KEYS[13]) -- a key of someone else's under that name is neither read nor overwritten
end
if ARGV[3] ~= '*' then
  if (rcall('GET', KEYS[13]) or '') ~= ARGV[3] then
    return redis.error_reply('CHATOUTBOX_MARK the mark under ' .. KEYS[13] .. ' is not the one the relay committed last')
  end
end
local checked = {}
-- queueKey returns KEYS[i] after checking its type; a wrong type refuses the whole batch
local function queueKey(i)
  if not checked[i] then
    checkType(KEYS[i])
    checked[i] = true
  end
  return KEYS[i]
end
for i = 1, 5 do queueKey(i) end
-- inState: the job is in one of the queue's states. Only asked for an id whose hash exists (a
-- resent batch); the sets first, then active (short), then wait from its newest end, where a
-- resent job sits, so a whole scan happens only for a hash no state holds.
local function inState(id)
  for _, i in ipairs({6, 7, 8, 9, 10}) do
    if rcall('ZSCORE', queueKey(i), id) then return true end
  end
  for _, i in ipairs({5, 1, 11}) do
    if rcall('LPOS', queueKey(i), id) then return true end
  end
  return false
end
local verdict, seen = {}, {}
for k = nfixed + 1, #KEYS do
  local first = seen[KEYS[k]]
  local t = not first and rcall('TYPE', KEYS[k])['ok']
  if first then
    -- two rows of one batch with one id: the first adds it (or is refused, and so is this one)
    verdict[k] = (first == 'new' or first == 'orphan' or first == 'dup') and 'dup' or first
  elseif t == 'none' then
    verdict[k] = 'new'
  elseif t ~= 'hash' then
    verdict[k] = KEYS[k] .. ' holds a ' .. t .. ', not a job hash'
  elseif inState(ARGV[5 + (k - nfixed - 1) * 4]) then
    verdict[k] = 'dup'
  else
    verdict[k] = 'orphan' -- a hash no state holds (never a job, or one a failed write left): replaced
  end
  seen[KEYS[k]] = first or verdict[k]
end

local meta = queueMeta(KEYS[2])
local blocked = isBlocked(meta, KEYS[5])

-- every check passed: the writes start here, and none of them can fail
local maxEvents = eventsMaxLen(KEYS[2], meta)
local ts = ARGV[1]
local out = {}
local created = {}
for k = nfixed + 1, #KEYS do
  local a = 5 + (k - nfixed - 1) * 4
  local id, v = ARGV[a], verdict[k]
  if v == 'dup' then
    rcall('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', id)
    out[k - nfixed] = 0
  elseif v == 'new' or v == 'orphan' then
    if v == 'orphan' then rcall('DEL', KEYS[k]) end
    rcall('HSET', KEYS[k], 'name', ARGV[a + 1], 'data', ARGV[a + 2], 'opts', ARGV[a + 3],
      'timestamp', ts, 'delay', '0', 'priority', '0')
    rcall('XADD', KEYS[3], '*', 'event', 'added', 'jobId', id, 'name', ARGV[a + 1])
    rcall('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id)
    out[k - nfixed] = 1
    created[#created + 1] = id
  else
    out[k - nfixed] = v
  end
end
if #created > 0 then
  rcall('LPUSH', KEYS[1], unpack(created))
  if not blocked then
    rcall('ZADD', KEYS[4], '0', '0')
  end
end
if ARGV[4] ~= '' then
  rcall('SET', KEYS[13], ARGV[4])
end
return out
