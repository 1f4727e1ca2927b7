// common/relay/bullmq_batch_add.cpp - the batch-add Lua script (common/relay/lua/batch_add.lua, after the
// shared prelude) and its request encoding.
#include "common/relay/bullmq_batch_add.hpp"

#include "common/bullmq/lua_prelude.hpp"
#include "common/relay/lua/scripts.hpp" // built from common/relay/lua/*.lua
#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"
#include "common/relay/error.hpp"
#include "common/relay/resp.hpp"

#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

namespace {

// Keys are declared (not computed in Lua) so the script stays correct on a Redis Cluster when the
// prefix carries a hash tag, e.g. "{bull}": the queue's keys and the service's layout key then share
// the tag's slot. The layout key follows the fixed keys; it is declared on every shard, read on
// shard 0 only (the one that holds it). The mark's key comes next, in the queue's slot.
constexpr const char *kFixedKeys[] = {"wait", "meta", "events", "marker", "active", "completed", "failed",
                                      "delayed", "prioritized", "waiting-children", "paused"};
constexpr int kNumFixedKeys = sizeof kFixedKeys / sizeof kFixedKeys[0];
constexpr int kNumKeysBeforeJobs = kNumFixedKeys + 2;

// The error reply of a call whose layout key differs from the caller's expectation, then its value.
constexpr std::string_view kLayoutChanged = "CHATOUTBOX_LAYOUT ";
// The error reply of a call whose mark differs from the caller's expectation.
constexpr std::string_view kMarkChanged = "CHATOUTBOX_MARK ";

void
CheckName(std::string_view what, std::string_view v)
{
	std::string problem = bullmq::NameProblem(what, v);
	if (!problem.empty())
		throw Error("22023", "BullMQ " + problem, bullmq::kNameRule);
}

} // namespace

const std::string &
BatchAddScript()
{
	static const std::string script = std::string(bullmq::kLuaPrelude) + relay_lua::kBatchAdd;
	return script;
}

std::string
MarkKey(std::string_view prefix, std::string_view queue)
{
	return bullmq::QueueKey(prefix, queue, bullmq::kRelayMarkKeyName);
}

void
EncodeBatchAdd(std::string_view prefix, std::string_view queue, const LayoutCheck &layout, const MarkStep &mark,
               const JobSpec *jobs, size_t n, int64_t now_ms, std::string_view sha, std::string *out)
{
	CheckName("prefix", prefix);
	CheckName("queue name", queue);
	CheckName("queue name", layout.service_queue);
	// On a cluster (a queue in its "{...}" form) one script's keys must share a slot: a call whose
	// queue is in another slot than the service's layout key names its own queue's layout key, which
	// it never reads, and checks nothing, as a call on a shard that does not hold the key.
	const bool elsewhere = InClusterForm(queue) && KeySlot(LayoutKey(prefix, queue)) != KeySlot(LayoutKey(prefix, layout.service_queue));
	const LayoutExpect expect = elsewhere ? LayoutExpect::kUnchecked : layout.expect;
	std::string expected;
	if (expect == LayoutExpect::kAbsent)
		expected = "absent";
	else if (expect == LayoutExpect::kHolds)
		expected.append("=").append(layout.value);
	const size_t nkeys = kNumKeysBeforeJobs + n;
	RespCommand cmd(out, 3 + nkeys + 4 + 4 * n);
	if (sha.empty())
		cmd.Arg("EVAL").Arg(BatchAddScript());
	else
		cmd.Arg("EVALSHA").Arg(sha);
	cmd.Arg(static_cast<long long>(nkeys));
	for (const char *suffix : kFixedKeys)
		cmd.Arg(bullmq::QueueKey(prefix, queue, suffix));
	cmd.Arg(LayoutKey(prefix, elsewhere ? queue : layout.service_queue));
	cmd.Arg(MarkKey(prefix, queue));
	for (size_t i = 0; i < n; i++)
		cmd.Arg(bullmq::QueueKey(prefix, queue, jobs[i].id));
	cmd.Arg(static_cast<long long>(now_ms));
	cmd.Arg(expected);
	cmd.Arg(mark.expect).Arg(mark.next);
	std::string opts;
	for (size_t i = 0; i < n; i++) {
		// The id is validated to [A-Za-z0-9._-], so it needs no JSON escaping.
		opts.assign("{\"jobId\":\"").append(jobs[i].id).append("\",\"attempts\":0}");
		cmd.Arg(jobs[i].id).Arg(jobs[i].name).Arg(jobs[i].data).Arg(opts);
	}
}

bool
IsLayoutChanged(std::string_view error_reply, std::string *value)
{
	if (error_reply.substr(0, kLayoutChanged.size()) != kLayoutChanged)
		return false;
	value->assign(error_reply.substr(kLayoutChanged.size()));
	return true;
}

bool
IsMarkChanged(std::string_view error_reply, std::string *what)
{
	if (error_reply.substr(0, kMarkChanged.size()) != kMarkChanged)
		return false;
	what->assign(error_reply.substr(kMarkChanged.size()));
	return true;
}

} // namespace chat_outbox
