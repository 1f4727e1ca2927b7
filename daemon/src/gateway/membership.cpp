// daemon/src/gateway/membership.cpp - see membership.hpp.
#include "gateway/membership.hpp"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "gateway/conversation.hpp"
#include "gateway/hub.hpp"
#include "gateway/query_queue.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

namespace {
// The chats of a batch of users ($1: a JSON array of their subs), each user's in ascending order.
const char *const kChatsOfUsers =
    "SELECT m.user_id, m.chat_id FROM chat_outbox.members m WHERE m.user_id OPERATOR(pg_catalog.=) ANY("
    "ARRAY(SELECT pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb))) ORDER BY m.chat_id";
// Users read by one query at most: a connect storm costs one round trip per this many users, and one
// answer holds their chats only.
constexpr size_t kUsersPerRead = 500;
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
	if (it == users_.end() || it->second.read != Entry::Read::None || hub_.HasClientsOf(sub))
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
	if (e.known == Entry::Chats::Known) {
		cb(true, e.chats);
		return;
	}
	e.waiting.push_back(std::move(cb));
	if (e.read == Entry::Read::None)
		Load(sub);
}

void
Membership::Load(const std::string &sub)
{
	Entry &e = users_[sub];
	e.read = Entry::Read::Out;
	batch_.push_back(sub);
	ReadBatch();
}

// ReadBatch sends one query for the users waiting to be read, unless one is out: the loads that come
// meanwhile go in the next one, so a storm of connects costs a round trip per batch, not per user.
void
Membership::ReadBatch()
{
	if (read_ == Read::Out || batch_.empty())
		return;
	size_t n = std::min(batch_.size(), kUsersPerRead);
	std::vector<std::string> subs(batch_.begin(), batch_.begin() + static_cast<std::ptrdiff_t>(n));
	batch_.erase(batch_.begin(), batch_.begin() + static_cast<std::ptrdiff_t>(n));
	read_ = Read::Out;
	reads_++;
	// ahead of the queries waiting (a storm's chat_state lookups): the connects wait on this one
	queries_.RunFirst(kChatsOfUsers, PgParams{nlohmann::json(subs).dump()}, [this, subs](PgResult &&r) {
		read_ = Read::Idle;
		if (!r.ok)
			Log(Level::Warning, "gateway: reading chat_outbox.members for %zu user(s) failed: %s", subs.size(), r.error.c_str());
		std::unordered_map<std::string, std::vector<int64_t>> chats;
		for (const auto &row : r.rows) {
			int64_t chat = 0;
			if (row.size() >= 2 && row[0] && row[1] && JsonInteger(*row[1], &chat))
				chats[*row[0]].push_back(chat);
		}
		for (const std::string &sub : subs)
			Loaded(sub, r.ok, std::move(chats[sub]));
		ReadBatch();
	});
}

void
Membership::Loaded(const std::string &sub, bool ok, std::vector<int64_t> chats)
{
	auto it = users_.find(sub);
	if (it == users_.end())
		return;
	Entry &e = it->second;
	const bool stale = e.read == Entry::Read::Stale;
	e.read = Entry::Read::None;
	if (ok && stale) {
		Load(sub);
		return;
	}
	std::vector<ChatsCallback> waiting;
	waiting.swap(e.waiting);
	if (!ok) {
		if (e.known == Entry::Chats::Unknown)
			users_.erase(it);
		for (auto &cb : waiting)
			cb(false, {});
		return;
	}
	std::vector<int64_t> before = std::move(e.chats);
	const bool was_known = e.known == Entry::Chats::Known;
	e.chats = chats;
	e.known = Entry::Chats::Known;
	if (was_known)
		Apply(sub, before, chats);
	for (auto &cb : waiting)
		cb(true, chats);
	Evict(sub); // the connects that asked may all have been refused or gone
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
			if (e.read != Entry::Read::None)
				e.read = Entry::Read::Stale;
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
	if (e.read != Entry::Read::None)
		e.read = Entry::Read::Stale;
	if (e.known == Entry::Chats::Unknown)
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
