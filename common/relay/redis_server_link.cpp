// common/relay/redis_server_link.cpp - see redis_server_link.hpp.
#include "common/relay/redis_server_link.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <utility>

#include "common/redis_handshake.hpp"
#include "common/redis_safety.hpp"
#include "common/redis_script.hpp"
#include "common/redis_sentinel.hpp"
#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

namespace {

struct ReplyFree {
	void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

int64_t
NowMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace

RedisServerLink::RedisServerLink(RedisUrl url, int64_t timeout_ms, std::string prefix, int64_t min_replicas)
    : url_(std::move(url)), timeout_ms_(timeout_ms), min_replicas_(min_replicas), prefix_(std::move(prefix))
{
}

RedisServerLink::~RedisServerLink() { Disconnect(); }

bool
RedisServerLink::Connected() const
{
	return conn_.Connected();
}

std::string
RedisServerLink::Warning() const
{
	return warning_;
}

std::string
RedisServerLink::Appendfsync() const
{
	return appendfsync_;
}

int64_t
RedisServerLink::ScriptReloads() const
{
	return script_reloads_;
}

std::string
RedisServerLink::TakeNotice()
{
	return std::exchange(notice_, std::string());
}

void
RedisServerLink::Asking()
{
	Reply r(Checked({"ASKING"}));
}

std::vector<SlotRange>
RedisServerLink::ClusterSlots()
{
	Reply r(Checked({"CLUSTER", "SLOTS"}));
	if (r->type != REDIS_REPLY_ARRAY)
		FailConnection("CLUSTER SLOTS: unexpected reply");
	std::vector<SlotRange> out;
	for (size_t i = 0; i < r->elements; i++) {
		const redisReply *e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 || e->element[0]->type != REDIS_REPLY_INTEGER ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			FailConnection("CLUSTER SLOTS: unexpected reply");
		std::vector<std::string> hosts;
		std::vector<long long> ports;
		for (size_t k = 2; k < e->elements; k++) {
			const redisReply *node = e->element[k];
			if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 || node->element[0]->type != REDIS_REPLY_STRING ||
			    node->element[1]->type != REDIS_REPLY_INTEGER)
				FailConnection("CLUSTER SLOTS: unexpected node in the reply");
			std::string host(node->element[0]->str, node->element[0]->len);
			// "" or "?": the node knows no address of its own to announce: the one it was reached at
			hosts.push_back(host.empty() || host == "?" ? url_.host : host);
			ports.push_back(node->element[1]->integer);
		}
		std::string why;
		auto range = SlotRangeFromReply(e->element[0]->integer, e->element[1]->integer, hosts, ports, &why);
		if (!range)
			FailConnection("CLUSTER SLOTS: " + why);
		out.push_back(std::move(*range));
	}
	return out;
}

void
RedisServerLink::Disconnect()
{
	conn_.Close();
}

void
RedisServerLink::FailConnection(const std::string &what)
{
	std::string why = what;
	if (!conn_.Connected() && !conn_.Error().empty())
		why += ": " + conn_.Error();
	Disconnect();
	throw RedisFailure(RedisFailure::kConnection, why);
}

redisReply *
RedisServerLink::Roundtrip(const std::string &resp)
{
	redisReply *reply = conn_.Formatted(resp);
	if (!reply)
		FailConnection("batch add");
	return reply;
}

redisReply *
RedisServerLink::Command(const std::vector<std::string> &argv)
{
	redisReply *r = conn_.Command(argv);
	if (!r)
		FailConnection(argv[0]);
	return r;
}

void
RedisServerLink::Connect()
{
	RedisUrl target = url_;
	if (url_.IsSentinel()) {
		// every connect of a sentinel URL asks the sentinels first: that is how a failover is followed
		std::string why;
		auto master = DiscoverMaster(url_, std::min<int64_t>(timeout_ms_, 1000), &sentinel_cursor_, &why);
		if (!master)
			throw RedisFailure(RedisFailure::kConnection, "sentinel discovery: " + why);
		std::string found = master->host + ":" + std::to_string(master->port);
		if (found != master_)
			notice_ = "redis master '" + url_.master_name + "' is at " + found + (master_.empty() ? "" : ", was " + master_);
		master_ = found;
		target = AtMaster(url_, *master);
	}
	if (!conn_.Connect(target, timeout_ms_))
		throw RedisFailure(RedisFailure::kConnection, conn_.Error());
	for (const auto &cmd : HandshakeCommands(url_)) {
		Reply r(Command(cmd));
		if (r->type == REDIS_REPLY_ERROR) {
			std::string why = cmd[0] + ": " + r->str;
			Disconnect();
			throw RedisFailure(RedisFailure::kConnection, why);
		}
	}
	if (url_.IsSentinel()) {
		Reply role(Command(MasterCheckCommand()));
		if (role->type != REDIS_REPLY_ARRAY || role->elements == 0 || role->element[0]->type != REDIS_REPLY_STRING ||
		    !RoleIsMaster(role->element[0]->str)) {
			sentinel_cursor_++; // that sentinel is stale: ask the next one
			Disconnect();
			throw RedisFailure(RedisFailure::kConnection, "ROLE: " + master_ + " is not the master (yet)");
		}
	}
	Reply loaded(Command({"SCRIPT", "LOAD", BatchAddScript()}));
	if (loaded->type != REDIS_REPLY_STRING) {
		std::string why = std::string("SCRIPT LOAD: ") + (loaded->type == REDIS_REPLY_ERROR ? loaded->str : "unexpected reply");
		Disconnect();
		throw RedisFailure(RedisFailure::kConnection, why);
	}
	sha_ = loaded->str;
	RedisDurability d;
	std::string *fields[] = {&d.appendonly, &d.maxmemory_policy, &d.appendfsync};
	const char *names[] = {"appendonly", "maxmemory-policy", "appendfsync"};
	for (int i = 0; i < 3; i++) {
		Reply r(Command({"CONFIG", "GET", names[i]}));
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING)
			*fields[i] = r->element[1]->str;
	}
	warning_ = RedisSafetyWarning(d);
	appendfsync_ = d.appendfsync;
	connects_++;
}

template <class Send>
auto
RedisServerLink::OnceMoreIfReused(Send &&send) -> decltype(send())
{
	bool reused = conn_.Connected();
	try {
		return send();
	} catch (const RedisFailure &f) {
		if (f.kind != RedisFailure::kConnection || !reused || std::strstr(f.what(), "timed out"))
			throw;
	}
	return send();
}

redisReply *
RedisServerLink::Sent(const std::vector<std::string> &argv)
{
	return OnceMoreIfReused([&] {
		if (!conn_.Connected())
			Connect();
		return Command(argv);
	});
}

redisReply *
RedisServerLink::Checked(const std::vector<std::string> &argv)
{
	redisReply *r = Sent(argv);
	if (r->type == REDIS_REPLY_ERROR) {
		RedisFailure f(RedisFailure::kService, argv[0] + ": " + r->str);
		f.reply.assign(r->str, r->len);
		freeReplyObject(r);
		throw f;
	}
	return r;
}

std::optional<std::string>
RedisServerLink::Get(const std::string &key)
{
	Reply r(Checked({"GET", key}));
	if (r->type == REDIS_REPLY_STRING)
		return std::string(r->str, r->len);
	return std::nullopt;
}

void
RedisServerLink::Set(const std::string &key, const std::string &value)
{
	Reply r(Checked({"SET", key, value}));
}

int64_t
RedisServerLink::EvalInteger(const std::string &script, const std::vector<std::string> &keys)
{
	std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
	argv.insert(argv.end(), keys.begin(), keys.end());
	Reply r(Checked(argv));
	return r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
}

void
RedisServerLink::ConfirmReplicated()
{
	if (min_replicas_ <= 0)
		return;
	if (!conn_.Connected())
		FailConnection("WAIT: not connected");
	int64_t wait_ms = std::max<int64_t>(timeout_ms_ / 2, 1); // never 0: WAIT 0 blocks for ever
	Reply r(Command({"WAIT", std::to_string(min_replicas_), std::to_string(wait_ms)}));
	if (r->type != REDIS_REPLY_INTEGER) {
		std::string why = std::string("WAIT: ") + (r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		Disconnect();
		throw RedisFailure(RedisFailure::kConnection, why);
	}
	if (r->integer < min_replicas_) {
		std::string why = "WAIT: " + std::to_string(r->integer) + " of " + std::to_string(min_replicas_) +
		                  " replicas acknowledged the pass within " + std::to_string(wait_ms) +
		                  " ms (--redis-min-replicas, chat_outbox.redis_min_replicas)";
		Disconnect();
		throw RedisFailure(RedisFailure::kConnection, why);
	}
}

void
RedisServerLink::Ping()
{
	Reply r(Sent({"PING"}));
	if (r->type == REDIS_REPLY_ERROR) {
		std::string why = std::string("PING: ") + r->str;
		Disconnect();
		throw RedisFailure(RedisFailure::kConnection, why);
	}
}

std::vector<std::optional<std::string>>
RedisServerLink::AddBatch(const std::string &queue, const LayoutCheck &layout, const MarkStep &mark, const JobSpec *jobs,
                          size_t n)
{
	return OnceMoreIfReused([&] {
		for (int reloads = 0;; reloads++) {
			if (!conn_.Connected())
				Connect();
			std::string request;
			EncodeBatchAdd(prefix_, queue, layout, mark, jobs, n, NowMs(), sha_, &request);
			Reply r(Roundtrip(request));
			if (r->type == REDIS_REPLY_ERROR && IsNoScriptError(r->str) && reloads < 2) {
				// SCRIPT FLUSH, or a failover behind a proxy that kept the connection: load it again
				Reply loaded(Command({"SCRIPT", "LOAD", BatchAddScript()}));
				if (loaded->type == REDIS_REPLY_STRING)
					sha_ = loaded->str;
				script_reloads_++;
				continue;
			}
			std::string held;
			if (r->type == REDIS_REPLY_ERROR && IsLayoutChanged(std::string_view(r->str, r->len), &held))
				throw RedisFailure(RedisFailure::kLayoutChanged, "the layout key holds " + held + " now, not what the pass relayed by");
			if (r->type == REDIS_REPLY_ERROR && IsMarkChanged(std::string_view(r->str, r->len), &held))
				throw RedisFailure(RedisFailure::kMarkChanged, held);
			if (r->type == REDIS_REPLY_ERROR) {
				RedisFailure f(RedisFailure::kService, std::string("batch add: ") + r->str);
				f.reply.assign(r->str, r->len);
				throw f;
			}
			if (r->type != REDIS_REPLY_ARRAY || r->elements != n)
				FailConnection("batch add: unexpected reply");
			std::vector<std::optional<std::string>> out(n);
			for (size_t i = 0; i < n; i++)
				if (r->element[i]->type == REDIS_REPLY_STRING)
					out[i] = std::string(r->element[i]->str, r->element[i]->len);
			return out;
		}
	});
}

} // namespace chat_outbox
