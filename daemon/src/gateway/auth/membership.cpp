// daemon/src/gateway/auth/membership.cpp - see membership.hpp.
#include "gateway/auth/membership.hpp"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/conversation/conversation.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/hub/query_queue.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

namespace {
// The chats of a batch of users ($1: a JSON object of their subs, each with the chats its sockets
// hold): per user its first $2 chats by id ('f'), and which of the held ones are still its ('s'),
// so a read tells a chat removed from one only pushed past the first (MemberChats, Gone).
const char *const kChatsOfUsers =
    "SELECT u.key, f.chat_id, 'f' FROM pg_catalog.jsonb_each($1::pg_catalog.jsonb) u CROSS JOIN LATERAL ("
    "SELECT m.chat_id FROM chat_outbox.members m WHERE m.user_id OPERATOR(pg_catalog.=) u.key "
    "ORDER BY m.chat_id LIMIT $2::pg_catalog.int8) f "
    "UNION ALL SELECT m.user_id, m.chat_id, 's' FROM pg_catalog.jsonb_each($1::pg_catalog.jsonb) u "
    "JOIN chat_outbox.members m ON m.user_id OPERATOR(pg_catalog.=) u.key AND m.chat_id OPERATOR(pg_catalog.=) ANY("
    "ARRAY(SELECT pg_catalog.int8(pg_catalog.jsonb_array_elements_text(u.value)))) "
    "WHERE pg_catalog.jsonb_array_length(u.value) OPERATOR(pg_catalog.>) 0"; // a connect's read holds nothing yet
// Whether one user is a member of one chat ($1 chat, $2 user): a join past a cut list.
const char *const kIsMember =
    "SELECT 1 FROM chat_outbox.members WHERE chat_id OPERATOR(pg_catalog.=) $1::pg_catalog.int8 "
    "AND user_id OPERATOR(pg_catalog.=) $2";
// Users read by one query at most: a connect storm costs one round trip per this many users, and one
// answer holds their chats only.
constexpr size_t kUsersPerRead = 500;

void
SortUnique(std::vector<int64_t> *v)
{
	std::sort(v->begin(), v->end());
	v->erase(std::unique(v->begin(), v->end()), v->end());
}
} // namespace

Membership::Membership(Hub &hub, QueryQueue &queries, PgClient &pg, Conversation &conv, size_t bound)
    : hub_(hub), queries_(queries), pg_(pg), conv_(conv), bound_(bound)
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
		     (sub.size() > kInlineKey ? sub.capacity() + 1 : 0) + e.chats.chats.capacity() * sizeof(int64_t) +
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

// A query's answer and the NOTIFYs come on the same connection in commit order: a removal committed
// while the query ran is heard after its answer (and revokes what it granted), one committed before
// it started is not in its answer.
void
Membership::IsMember(const std::string &sub, int64_t chat, std::function<void(Answer)> cb)
{
	auto it = users_.find(sub);
	MemberChats::Verdict v = it != users_.end() && it->second.known == Entry::Chats::Known ? it->second.chats.Has(chat)
	                                                                                       : MemberChats::Verdict::Ask;
	if (v != MemberChats::Verdict::Ask) {
		cb(v == MemberChats::Verdict::Yes ? Answer::Yes : Answer::No);
		return;
	}
	if (queries_.Full()) {
		cb(Answer::Unavailable);
		return;
	}
	queries_.Run(kIsMember, PgParams{std::to_string(chat), sub}, [cb = std::move(cb)](PgResult &&r) {
		cb(!r.ok ? Answer::Unavailable : r.rows.empty() ? Answer::No
		                                                : Answer::Yes);
	});
}

bool
Membership::Cut(const std::string &sub) const
{
	auto it = users_.find(sub);
	return it != users_.end() && it->second.known == Entry::Chats::Known && it->second.chats.Cut();
}

std::vector<int64_t>
Membership::Held(const std::string &sub) const
{
	std::vector<int64_t> held;
	auto it = users_.find(sub);
	if (it != users_.end() && it->second.known == Entry::Chats::Known)
		held = it->second.chats.chats;
	for (const auto &c : hub_.ClientsOf(sub))
		held.insert(held.end(), c->allowed.begin(), c->allowed.end());
	SortUnique(&held);
	return held;
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
	// what each user's sockets hold now: a chat of them the read does not find was removed
	auto asked = std::make_shared<std::unordered_map<std::string, std::vector<int64_t>>>();
	nlohmann::json users = nlohmann::json::object();
	for (const std::string &sub : subs)
		users[sub] = (*asked)[sub] = Held(sub);
	// ahead of the queries waiting (a storm's chat_state lookups): the connects wait on this one
	queries_.RunFirst(kChatsOfUsers, PgParams{users.dump(), std::to_string(bound_ + 1)},
	                  [this, subs, asked](PgResult &&r) {
		read_ = Read::Idle;
		if (!r.ok)
			Log(Level::Warning, "gateway: reading chat_outbox.members for %zu user(s) failed: %s", subs.size(), r.error.c_str());
		std::unordered_map<std::string, std::vector<int64_t>> first, still;
		for (const auto &row : r.rows) {
			int64_t chat = 0;
			if (row.size() >= 3 && row[0] && row[1] && row[2] && JsonInteger(*row[1], &chat))
				(*row[2] == "f" ? first : still)[*row[0]].push_back(chat);
		}
		for (const std::string &sub : subs)
			Loaded(sub, r.ok, std::move(first[sub]), (*asked)[sub], std::move(still[sub]));
		ReadBatch();
	});
}

void
Membership::Loaded(const std::string &sub, bool ok, std::vector<int64_t> first, const std::vector<int64_t> &asked,
                   std::vector<int64_t> still)
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
	SortUnique(&first);
	SortUnique(&still);
	MemberChats now = MemberChats::Read(first, bound_);
	if (e.known == Entry::Chats::Known) {
		std::vector<int64_t> got;
		std::set_difference(now.chats.begin(), now.chats.end(), e.chats.chats.begin(), e.chats.chats.end(),
		                    std::back_inserter(got));
		const bool was_cut = e.chats.Cut();
		e.chats = now;
		Apply(sub, Gone(asked, first, still), got);
		if (!was_cut && now.Cut())
			TellCut(sub);
	} else {
		e.chats = now;
		e.known = Entry::Chats::Known;
	}
	for (auto &cb : waiting)
		cb(true, now);
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
	if (change.kind == MemberChange::Kind::Added) {
		const bool was_cut = e.chats.Cut();
		if (e.chats.Add(change.chat, bound_))
			Apply(change.user, {}, {change.chat});
		if (!was_cut && e.chats.Cut())
			TellCut(change.user);
		return;
	}
	// a socket may hold a chat past a cut list (joined one by one): every socket is asked to let go
	const bool was_listed = e.chats.Remove(change.chat);
	Apply(change.user, {change.chat}, {});
	// a cut list that lost one is read again, so that it holds the first chats again
	if (was_listed && e.chats.Cut() && e.read == Entry::Read::None)
		Load(change.user);
}

void
Membership::TellCut(const std::string &sub)
{
	for (const auto &c : hub_.ClientsOf(sub))
		if (!c->IsClosed())
			conv_.Emit(*c, "chats_cut", {{"max_member_chats", bound_}});
}

void
Membership::Apply(const std::string &sub, const std::vector<int64_t> &gone, const std::vector<int64_t> &got)
{
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
