// daemon/src/gateway/conversation/receipts.cpp - see receipts.hpp.
#include "gateway/conversation/receipts.hpp"

#include <algorithm>

#include "gateway/conversation/core/chat_keys.hpp"
#include "gateway/conversation/core/unread_batch.hpp"
#include "gateway/conversation/presence.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/hub/query_queue.hpp"
#include "inbox/core/inbox_sql.hpp"
#include "net/redis_conn.hpp"
#include "common/redis_script.hpp"
#include "gateway/conversation/lua/scripts.hpp" // built from gateway/conversation/lua/*.lua

namespace chat_outboxd {

namespace {

// KeepHighestScript is lua/keep_highest.lua: the reads and shown hashes keep each field's highest
// entry (its KEYS, ARGV and rules in its head).
const chat_outbox::RedisScript &
KeepHighestScript()
{
	static const chat_outbox::RedisScript s = chat_outbox::MakeRedisScript("chat keep highest", gateway_lua::kKeepHighest);
	return s;
}

// Values of a hash (HVALS) that are JSON objects, without their chat_id (the state names its chat once).
nlohmann::json
Entries(const RedisValue *reply)
{
	nlohmann::json out = nlohmann::json::array();
	if (reply && reply->IsArray())
		for (const RedisValue &v : reply->elements) {
			nlohmann::json j = nlohmann::json::parse(v.str, nullptr, false);
			if (j.is_object()) {
				j.erase("chat_id");
				out.push_back(std::move(j));
			}
		}
	return out;
}

constexpr int64_t kUnreadCap = 1000;

using InboxStateRow = std::vector<std::optional<std::string>>; // a chat_state row: user, seq, message_id, unread

nlohmann::json
OrNull(const std::optional<std::string> &v)
{
	return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

} // namespace

Receipts::Receipts(ConvContext &ctx, Presence &presence) : ctx_(ctx), presence_(presence)
{
	std::string svc = QuoteIdent(ctx.cfg.service);
	sql_mark_ = "SELECT cursor_seq, cursor_message_id, pg_catalog.to_json(cursor_created_at) OPERATOR(pg_catalog.#>>) '{}', "
	            "moved FROM " +
	            svc + ".mark_read($1::bigint, $2::text, $3::bigint)";
	// One statement for every join of a batch (conv::UnreadBatch): each user's cursor (none for the NULL user,
	// the one without a sub) and the inbox's messages of the chat above it (not their edits and deletes, which
	// 1.0 tables cannot hold), counted up to kUnreadCap so each count's cost is bounded, and once per distinct
	// cursor (a storm's users mostly share one: none, or the chat's last message).
	for (bool with_edits : {false, true})
		sql_state_[with_edits] =
		    "WITH u AS MATERIALIZED (SELECT u.user_id, r.seq, r.message_id FROM pg_catalog.unnest($2::text[]) AS "
		    "u(user_id) LEFT JOIN " +
		    svc + ".read_cursors r ON r.chat_id OPERATOR(pg_catalog.=) $1::bigint AND "
		          "r.user_id OPERATOR(pg_catalog.=) u.user_id) SELECT u.user_id, u.seq, u.message_id, n.unread FROM u JOIN "
		          "(SELECT f.after, (SELECT pg_catalog.count(*) FROM (SELECT 1 FROM " +
		    svc + ".inbox i WHERE i.chat_id "
		          "OPERATOR(pg_catalog.=) $1::bigint AND i.seq OPERATOR(pg_catalog.>) f.after" +
		    std::string(with_edits ? " AND i.target IS NULL" : "") + " LIMIT " + std::to_string(kUnreadCap) +
		    ") c) AS unread FROM (SELECT DISTINCT COALESCE(u.seq, 0) AS after FROM u) f) n ON n.after "
		    "OPERATOR(pg_catalog.=) COALESCE(u.seq, 0)";
}

void
Receipts::Read(const std::shared_ptr<Client> &c, int64_t chat, int64_t seq, const Conversation::Reply &reply)
{
	if (ctx_.queries.Full())
		return reply(conv::Error("busy", "too many queries waiting for the database; retry later"));
	std::weak_ptr<Client> weak = c;
	conv::User user = ctx_.conv.User(*c);
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	ctx_.queries.Run(sql_mark_, {std::to_string(chat), c->sub, std::to_string(seq)},
	                 [this, alive, weak, chat, user, reply](PgResult &&r) {
		auto live = weak.lock();
		if (!live || live->IsClosed())
			return;
		if (!r.ok || r.rows.empty() || r.rows[0].size() < 4)
			return reply(conv::Error("unavailable", "the database did not store the read cursor; retry"));
		const auto &row = r.rows[0];
		int64_t cursor = 0;
		bool has = row[0] && JsonInteger(*row[0], &cursor);
		bool moved = row[3] && *row[3] == "t";
		reply({{"ok", true}, {"chat_id", chat}, {"seq", has ? nlohmann::json(cursor) : nlohmann::json(nullptr)}, {"message_id", OrNull(row[1])}, {"moved", moved}});
		if (!moved || !has)
			return;
		auto a = alive.lock();
		if (!a || !*a)
			return;
		nlohmann::json event = {{"chat_id", chat}, {"user", conv::UserJson(user)}, {"seq", cursor}, {"message_id", OrNull(row[1])}, {"created_at", OrNull(row[2])}};
		chat_outbox::ScriptCall call{&KeepHighestScript(), {ChatReadsKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)}, {user.service + "\t" + user.sub, DumpJson(event), std::to_string(cursor), ChatEventsChannel({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), conv::Envelope(conv::Event::Read, ctx_.cfg.service, event)}};
		ctx_.redis.Eval(call, [](const RedisValue *, const std::string &) {});
	});
}

void
Receipts::SendChatState(const std::shared_ptr<Client> &c, int64_t chat)
{
	nlohmann::json state = {{"chat_id", chat}, {"me", conv::UserJson(ctx_.conv.User(*c))}, {"unread", nullptr}, {"my_read", nullptr}};
	std::optional<std::string> user;
	if (Conversation::Identified(*c))
		user = c->sub;
	joins_.Add(chat, Joiner{c, std::move(user), std::move(state)});
	StartReads();
}

void
Receipts::StartReads()
{
	while (auto chat = joins_.NextReady())
		ReadUnread(*chat);
}

// ReadUnread answers the oldest joins waiting in chat's line (within conv::kUnreadBatchUsers and
// conv::kUnreadBatchBytes) with one statement; the joins that come meanwhile wait for the next.
void
Receipts::ReadUnread(int64_t chat)
{
	std::vector<Joiner> batch = joins_.Take(
	    chat, conv::kUnreadBatchUsers, conv::kUnreadBatchBytes,
	    [](const Joiner &j) {
		auto live = j.client.lock();
		return live && live->IsOpen();
	    },
	    [](const Joiner &j) { return conv::UnreadUserBytes(j.user); });
	if (batch.empty() || ctx_.queries.OptionalFull()) {
		// Postgres is behind: the states go without their users' unread counts and cursors (null, as when
		// Postgres does not answer) rather than take the room sends and replays need.
		for (Joiner &j : batch)
			SendShared(j.client, chat, std::move(j.state));
		joins_.Done(chat);
		return;
	}
	conv::UnreadBatch users;
	for (const Joiner &j : batch)
		users.Add(j.user);
	ctx_.hub.CountChatStateRead(batch.size());
	PgParams params = {std::to_string(chat), users.ArrayLiteral()};
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	ctx_.queries.RunBySchema(sql_state_, std::move(params), [this, alive, chat, batch = std::move(batch), users = std::move(users)](PgResult &&r) mutable {
		auto a = alive.lock();
		if (!a || !*a)
			return;
		std::vector<const InboxStateRow *> answer(users.Users().size(), nullptr);
		if (r.ok)
			for (const InboxStateRow &row : r.rows)
				if (row.size() >= 4)
					if (size_t i = users.Find(row[0]); i != conv::UnreadBatch::npos)
						answer[i] = &row;
		for (Joiner &j : batch) {
			auto live = j.client.lock();
			if (!live || !live->IsOpen())
				continue;
			if (const InboxStateRow *row = answer[users.Find(j.user)]) {
				int64_t unread = 0, seq = 0;
				if ((*row)[3] && JsonInteger(*(*row)[3], &unread))
					j.state["unread"] = unread;
				if ((*row)[1] && JsonInteger(*(*row)[1], &seq))
					j.state["my_read"] = {{"seq", seq}, {"message_id", OrNull((*row)[2])}};
			}
			SendShared(j.client, chat, std::move(j.state));
		}
		joins_.Done(chat);
		StartReads();
	});
}

void
Receipts::SendShared(const std::weak_ptr<Client> &weak, int64_t chat, nlohmann::json state)
{
	Shared &s = shared_[chat];
	s.waiting.emplace_back(weak, std::move(state));
	if (!s.reading)
		ReadShared(chat);
}

// ReadShared: three commands on one connection (the presence page, HVALS reads, HVALS shown); the script may be
// sent again after a NOSCRIPT, so the answers are counted rather than taken in order.
void
Receipts::ReadShared(int64_t chat)
{
	Shared &s = shared_[chat];
	s.reading = true;
	struct Reading {
		int answered = 0;
		nlohmann::json common = nlohmann::json::object();
		std::vector<std::pair<std::weak_ptr<Client>, nlohmann::json>> waiting;
	};
	auto r = std::make_shared<Reading>();
	r->waiting.swap(s.waiting);
	r->common["users"] = nlohmann::json::array();
	r->common["online"] = nullptr;
	r->common["users_next"] = nullptr;
	r->common["reads"] = nlohmann::json::array();
	r->common["shown"] = nlohmann::json::array();
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	auto answered = [this, alive, chat, r] {
		if (++r->answered < 3)
			return;
		auto a = alive.lock();
		if (!a || !*a)
			return;
		for (auto &[weak, state] : r->waiting) {
			auto live = weak.lock();
			if (!live || !live->IsOpen())
				continue;
			for (auto &[k, v] : r->common.items())
				state[k] = v;
			ctx_.conv.Emit(*live, "chat_state", state);
		}
		Shared &next = shared_[chat];
		next.reading = false;
		if (next.waiting.empty())
			shared_.erase(chat);
		else
			ReadShared(chat);
	};
	presence_.Read(chat, "", ctx_.cfg.presence_threshold, [r, answered](const Presence::Page *p) {
		if (p) {
			r->common["users"] = p->users;
			r->common["online"] = p->online;
			if (!p->next.empty())
				r->common["users_next"] = p->next;
		}
		answered();
	});
	ctx_.redis.Command({"HVALS", ChatReadsKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)}, [this, r, answered](const RedisValue *reply, const std::string &) {
		// A big chat's reads are its readers': only the furthest --presence-threshold go to each client, so a
		// chat_state stays O(threshold) however many have read.
		nlohmann::json reads = Entries(reply);
		size_t cap = static_cast<size_t>(ctx_.cfg.presence_threshold);
		if (reads.size() > cap) {
			auto seq = [](const nlohmann::json &e) { return e.value("seq", int64_t{0}); };
			std::partial_sort(reads.begin(), reads.begin() + static_cast<std::ptrdiff_t>(cap), reads.end(),
			                  [&seq](const nlohmann::json &a, const nlohmann::json &b) { return seq(a) > seq(b); });
			reads.erase(reads.begin() + static_cast<std::ptrdiff_t>(cap), reads.end());
			r->common["reads_more"] = true;
		}
		r->common["reads"] = std::move(reads);
		answered();
	});
	ctx_.redis.Command({"HVALS", ChatShownKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)}, [r, answered](const RedisValue *reply, const std::string &) {
		r->common["shown"] = Entries(reply);
		answered();
	});
}

void
Receipts::Shown(int64_t chat, const InboxMessage &last)
{
	nlohmann::json entry = {{"service", ctx_.cfg.service}, {"id", last.id}, {"seq", last.seq}, {"created_at", last.created_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(last.created_at)}};
	chat_outbox::ScriptCall call{&KeepHighestScript(), {ChatShownKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)}, {ctx_.cfg.service, DumpJson(entry), std::to_string(last.seq), "", ""}};
	ctx_.redis.Eval(call, [](const RedisValue *, const std::string &) {});
}

} // namespace chat_outboxd
