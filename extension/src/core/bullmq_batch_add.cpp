// extension/src/core/bullmq_batch_add.cpp - the batch-add Lua script and its request encoding.
#include "core/bullmq_batch_add.hpp"

#include "core/error.hpp"
#include "core/resp.hpp"

#include "core/cpp_only.hpp"

namespace chat_outbox {

namespace {

// Keys are declared (not computed in Lua) so the script stays correct on a Redis Cluster when the
// prefix carries a hash tag, e.g. "{bull}".
constexpr int kFixedKeys = 6; // wait, meta, events, marker, active, id

const char kScript[] = R"LUA(
-- chat_outbox batch add: KEYS = wait, meta, events, marker, active, id, then one job hash per job.
-- ARGV = timestamp, then id, name, data, opts per job. Returns 1 (created) / 0 (duplicate) per job.
-- Per job only what Queue.add leaves behind: the hash, `added` and `waiting` events; the ids go
-- onto `wait` with one LPUSH for the batch (same order as one LPUSH each, nobody can look in
-- between), and the `id` counter, which only auto-numbered adds need, is left alone.
-- Numbers go to redis.call as strings: Lua formats a number argument with sprintf on every call,
-- which showed in Redis' profile at 500 jobs per call.
local call = redis.call
local maxEvents = call('HGET', KEYS[2], 'opts.maxLenEvents')
if not maxEvents then
  maxEvents = '10000'
  call('HSET', KEYS[2], 'opts.maxLenEvents', maxEvents)
end
local meta = call('HMGET', KEYS[2], 'paused', 'concurrency')
local blocked = meta[1] ~= false
if not blocked and meta[2] then
  blocked = call('LLEN', KEYS[5]) >= tonumber(meta[2])
end
local ts = ARGV[1]
local out = {}
local created = {}
for k = 7, #KEYS do
  local a = 2 + (k - 7) * 4
  local id = ARGV[a]
  if call('EXISTS', KEYS[k]) == 1 then
    call('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', id)
    out[k - 6] = 0
  else
    call('HSET', KEYS[k], 'name', ARGV[a + 1], 'data', ARGV[a + 2], 'opts', ARGV[a + 3],
      'timestamp', ts, 'delay', '0', 'priority', '0')
    call('XADD', KEYS[3], '*', 'event', 'added', 'jobId', id, 'name', ARGV[a + 1])
    call('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id)
    out[k - 6] = 1
    created[#created + 1] = id
  end
end
if #created > 0 then
  call('LPUSH', KEYS[1], unpack(created))
  if not blocked then
    call('ZADD', KEYS[4], '0', '0')
  end
end
return out
)LUA";

void
CheckName(std::string_view what, std::string_view v)
{
	if (v.empty())
		throw Error("22023", std::string("BullMQ ") + std::string(what) + " is empty");
	if (v.find(':') != std::string_view::npos)
		throw Error("22023", std::string("BullMQ ") + std::string(what) + " \"" + std::string(v) + "\" contains ':'",
					"BullMQ splits keys on ':', so queue names and prefixes cannot contain it.");
}

} // namespace

const std::string &
BatchAddScript()
{
	static const std::string script(kScript);
	return script;
}

std::string
QueueKey(std::string_view prefix, std::string_view queue, std::string_view suffix)
{
	std::string k;
	k.reserve(prefix.size() + queue.size() + suffix.size() + 2);
	k.append(prefix).append(":").append(queue).append(":").append(suffix);
	return k;
}

void
EncodeBatchAdd(std::string_view prefix, std::string_view queue, const JobSpec *jobs, size_t n, int64_t now_ms,
			   std::string_view sha, std::string *out)
{
	CheckName("prefix", prefix);
	CheckName("queue name", queue);
	const size_t nkeys = kFixedKeys + n;
	RespCommand cmd(out, 3 + nkeys + 1 + 4 * n);
	if (sha.empty())
		cmd.Arg("EVAL").Arg(BatchAddScript());
	else
		cmd.Arg("EVALSHA").Arg(sha);
	cmd.Arg(static_cast<long long>(nkeys));
	for (const char *suffix : {"wait", "meta", "events", "marker", "active", "id"})
		cmd.Arg(QueueKey(prefix, queue, suffix));
	for (size_t i = 0; i < n; i++)
		cmd.Arg(QueueKey(prefix, queue, jobs[i].id));
	cmd.Arg(static_cast<long long>(now_ms));
	std::string opts;
	for (size_t i = 0; i < n; i++) {
		// The id is validated to [A-Za-z0-9._-], so it needs no JSON escaping.
		opts.assign("{\"jobId\":\"").append(jobs[i].id).append("\",\"attempts\":0}");
		cmd.Arg(jobs[i].id).Arg(jobs[i].name).Arg(jobs[i].data).Arg(opts);
	}
}

} // namespace chat_outbox
