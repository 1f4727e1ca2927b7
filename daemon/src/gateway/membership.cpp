// daemon/src/gateway/membership.cpp - see membership.hpp.
#include "gateway/membership.hpp"

#include <algorithm>
#include <iterator>

#include "base/log.hpp"
#include "gateway/conversation.hpp"
#include "gateway/hub.hpp"
#include "gateway/query_queue.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

namespace {
const char *const kChatsOfUser = "SELECT chat_id FROM chat_outbox.members WHERE user_id = $1 ORDER BY chat_id";
} // namespace

Membership::Membership(Hub &hub, QueryQueue &queries, PgClient &pg, Conversation &conv)
    : hub_(hub), queries_(queries), pg_(pg), conv_(conv)
{
	pg_.OnNotify([this](const std::string &channel, const std::string &payload) {
		if (channel == kMembersChannel)
			OnNotify(payload);
	});
	hub_.OnUserGone([this](const std::string &sub) { Evict(sub); });
}

void
Membership::Evict(const std::string &sub)
{
	auto it = users_.find(sub);
	if (it == users_.end() || it->second.loading || hub_.HasClientsOf(sub))
		return;
	users_.erase(it);
	// A hash map keeps its bucket array when emptied: after a storm of users who left, give it back
	// (halving at least, so the rehashes cost O(1) per eviction over time).
	if (users_.size() * 4 < users_.bucket_count())
		users_.rehash(0);
}

size_t
Membership::Bytes() const
{
	// A hash node holds the pair, a next pointer and the key's hash; a key longer than the string's
	// inline buffer (15 bytes in libstdc++) has its own allocation.
	constexpr size_t kInlineKey = 15;
	size_t n = users_.bucket_count() * sizeof(void *);
	for (const auto &[sub, e] : users_)
		n += sizeof(std::pair<const std::string, Entry>) + 2 * sizeof(void *) +
		     (sub.size() > kInlineKey ? sub.capacity() + 1 : 0) + e.chats.capacity() * sizeof(int64_t) +
		     e.waiting.capacity() * sizeof(ChatsCallback);
	return n;
}

void
Membership::PostgresUp()
{
	pg_.Query(std::string("LISTEN ") + kMembersChannel, {}, [](PgResult &&r) {
		if (!r.ok)
			Log(Level::Warning, "gateway: LISTEN %s failed: %s", kMembersChannel, r.error.c_str());
	});
	OnNotify("*"); // what changed while the connection was down was not heard
}

void
Membership::ChatsOf(const std::string &sub, ChatsCallback cb)
{
	Entry &e = users_[sub];
	if (e.loaded) {
		cb(true, e.chats);
		return;
	}
	e.waiting.push_back(std::move(cb));
	if (!e.loading)
		Load(sub);
}

void
Membership::Load(const std::string &sub)
{
	Entry &e = users_[sub];
	e.loading = true;
	e.stale = false;
	queries_.Run(kChatsOfUser, PgParams{sub}, [this, sub](PgResult &&r) {
		auto it = users_.find(sub);
		if (it == users_.end())
			return;
		Entry &e = it->second;
		e.loading = false;
		if (r.ok && e.stale) {
			Load(sub);
			return;
		}
		std::vector<ChatsCallback> waiting;
		waiting.swap(e.waiting);
		if (!r.ok) {
			Log(Level::Warning, "gateway: reading chat_outbox.members failed: %s", r.error.c_str());
			if (!e.loaded)
				users_.erase(it);
			for (auto &cb : waiting)
				cb(false, {});
			return;
		}
		std::vector<int64_t> chats;
		for (const auto &row : r.rows) {
			int64_t chat = 0;
			if (!row.empty() && row[0] && JsonInteger(*row[0], &chat))
				chats.push_back(chat);
		}
		std::vector<int64_t> before = std::move(e.chats);
		bool was_loaded = e.loaded;
		e.chats = chats;
		e.loaded = true;
		if (was_loaded)
			Apply(sub, before, chats);
		for (auto &cb : waiting)
			cb(true, chats);
		Evict(sub); // the connects that asked may all have been refused or gone
	});
}

void
Membership::OnNotify(const std::string &payload)
{
	MemberChange change;
	if (!ParseMemberChange(payload, &change)) {
		Log(Level::Warning, "gateway: ignored a %s notification it cannot read", kMembersChannel);
		return;
	}
	if (change.kind == MemberChange::Kind::All) {
		std::vector<std::string> subs;
		for (auto &[sub, e] : users_) {
			if (e.loading)
				e.stale = true;
			else
				subs.push_back(sub);
		}
		for (const std::string &sub : subs)
			Load(sub);
		return;
	}
	auto it = users_.find(change.user);
	if (it == users_.end())
		return; // nobody of this user is here, or asked
	Entry &e = it->second;
	if (e.loading)
		e.stale = true;
	if (!e.loaded)
		return;
	std::vector<int64_t> before = e.chats;
	auto pos = std::lower_bound(e.chats.begin(), e.chats.end(), change.chat);
	bool has = pos != e.chats.end() && *pos == change.chat;
	if (change.kind == MemberChange::Kind::Added && !has)
		e.chats.insert(pos, change.chat);
	else if (change.kind == MemberChange::Kind::Removed && has)
		e.chats.erase(pos);
	else
		return;
	Apply(change.user, before, e.chats);
}

void
Membership::Apply(const std::string &sub, const std::vector<int64_t> &before, const std::vector<int64_t> &after)
{
	std::vector<int64_t> gone, got;
	std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(gone));
	std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(got));
	if (gone.empty() && got.empty())
		return;
	for (const auto &c : hub_.ClientsOf(sub)) {
		if (c->IsClosed())
			continue;
		for (int64_t chat : gone) {
			if (hub_.Revoke(*c, chat))
				conv_.Emit(*c, "removed", {{"chat_id", chat}});
		}
		for (int64_t chat : got)
			hub_.Allow(*c, chat);
	}
}

} // namespace chat_outboxd
