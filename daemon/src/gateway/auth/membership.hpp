// daemon/src/gateway/auth/membership.hpp - --authz membership: which chats a token's sub may see, from
// chat_outbox.members, and the live revocation when that changes (docs/gateway.md, Membership).
//
// A cache per gateway, one entry per user: a connect storm costs one read per user (every socket of
// the user waiting for it shares it), never one per socket or per chat, and the reads of the users
// that wait together go as one query (up to kUsersPerRead users), one query out at a time. Entries are kept up to date
// by the NOTIFYs of chat_outbox_members (sql/parts/members.sql), heard on the gateway's own Postgres
// connection: NOTIFY is sent at commit, so a gateway never hears of a removal before it is visible,
// and needs no other bus; after a reconnect (notifications may have been missed) every entry is read
// again. A change is applied to every socket of the user on this gateway (the Hub's index by sub): a
// removed chat is left at once, with a `removed` event; an added one may be joined at once; one that makes the
// user's list longer than the bound is told with `chats_cut`.
//
// An entry holds at most --max-member-chats chats of its user, the first by chat id, and whether they
// are all (MemberChats): a user in a million chats costs what a user in the bound does. Whether a chat
// past a cut list is the user's is asked of the database, one chat at a time (IsMember, for a join).
//
// An entry lives while the user has an admitted socket here or a connect of the user waits for it:
// it goes when the user's last socket goes (Hub::OnUserGone) and, after a read, when no socket of the
// user was admitted with it (the connect was refused or gone). So the cache is bounded by the users
// connected, and a gateway that saw many users come and go holds only those still here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gateway/auth/core/member_change.hpp"
#include "gateway/auth/core/member_chats.hpp"
#include "gateway/hub/membership_view.hpp"

namespace chat_outboxd {

class Conversation;
class Hub;
class PgClient;
class QueryQueue;
struct Client;

class Membership final : public MembershipView {
  public:
	// bound: --max-member-chats, the most chats an entry holds
	Membership(Hub &hub, QueryQueue &queries, PgClient &pg, Conversation &conv, size_t bound);
	Membership(const Membership &) = delete;
	Membership &operator=(const Membership &) = delete;

	// MembershipView (gateway/hub/membership_view.hpp states what each answers).
	void ChatsOf(const std::string &sub, ChatsCallback cb) override;
	void IsMember(const std::string &sub, int64_t chat, std::function<void(Answer)> cb) override;
	bool Cut(const std::string &sub) const override;
	size_t Users() const override { return users_.size(); }
	size_t Bytes() const override;
	uint64_t Reads() const override { return reads_; }
	// PostgresUp: the connection is (re)established: LISTEN again, and read every cached user again.
	void PostgresUp();

  private:
	struct Entry {
		// Chats: whether chats holds the user's chats (Known after the first read answered).
		enum class Chats : uint8_t { Unknown,
			                         Known };
		// Read: None, or a read is queued or out (Out); Stale: a change came meanwhile, so its answer
		// may predate it and the user is read again when it comes.
		enum class Read : uint8_t { None,
			                        Out,
			                        Stale };
		MemberChats chats; // valid when Known
		Chats known = Chats::Unknown;
		Read read = Read::None;
		std::vector<ChatsCallback> waiting;
	};
	void OnNotify(const std::string &payload);
	// Load queues sub's read; ReadBatch sends the queued reads (kUsersPerRead users a query, one query
	// out at a time); Loaded ends one user's read (ok false: Postgres did not answer).
	void Load(const std::string &sub);
	void ReadBatch();
	// asked: the chats the user's sockets held when the read was sent, checked by it; still: those of
	// them the read found (see Gone).
	void Loaded(const std::string &sub, bool ok, std::vector<int64_t> first, const std::vector<int64_t> &asked,
	            std::vector<int64_t> still);
	// Held: the chats sub's sockets hold (sorted), which a read checks.
	std::vector<int64_t> Held(const std::string &sub) const;
	// Evict drops sub's entry unless a socket of the user is here or a read of it is out.
	void Evict(const std::string &sub);
	// Apply takes the sub's sockets from chats the user left and lets them into chats it got (each
	// socket within the bound).
	void Apply(const std::string &sub, const std::vector<int64_t> &gone, const std::vector<int64_t> &got);
	// TellCut: sub's list has just become cut (an addition, or a read again): its sockets get `chats_cut`, as a
	// connect with a cut list does (one with a cut list from its connect was told then).
	void TellCut(const std::string &sub);

	Hub &hub_;
	QueryQueue &queries_;
	PgClient &pg_;
	Conversation &conv_;
	const size_t bound_;
	std::unordered_map<std::string, Entry> users_;
	std::vector<std::string> batch_; // users whose read waits for the next query
	enum class Read : uint8_t { Idle,
		                        Out };
	uint64_t reads_ = 0;
	Read read_ = Read::Idle; // Out: a read of chat_outbox.members is out (the next batch waits)
};

} // namespace chat_outboxd
