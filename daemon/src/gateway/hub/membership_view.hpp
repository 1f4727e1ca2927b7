// daemon/src/gateway/hub/membership_view.hpp - MembershipView: what the Hub and the endpoints ask of
// --authz membership (gateway/auth/membership.hpp, the cache that answers it). The Hub sits below the
// membership (which moves the Hub's clients in and out of rooms), so it reaches it only through this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "gateway/auth/core/member_chats.hpp"

namespace chat_outboxd {

class MembershipView {
  public:
	virtual ~MembershipView() = default;
	using ChatsCallback = std::function<void(bool ok, const MemberChats &chats)>;
	// ChatsOf answers the sub's chats (sorted): from the cache at once, else after one query shared by
	// every caller for that sub; ok false when Postgres did not answer.
	virtual void ChatsOf(const std::string &sub, ChatsCallback cb) = 0;
	// IsMember answers whether chat is one of sub's (a user with a connected socket): from the entry
	// at once, or, past a cut list, after a query (Unavailable when Postgres did not answer or
	// --query-queue is full).
	enum class Answer : uint8_t { Yes,
		                          No,
		                          Unavailable };
	virtual void IsMember(const std::string &sub, int64_t chat, std::function<void(Answer)> cb) = 0;
	// Cut: sub has more chats than the bound (its entry holds the first ones only).
	virtual bool Cut(const std::string &sub) const = 0;
	// Users: the entries held; Bytes: what they hold (keys, chat ids, entries), for /metrics.
	virtual size_t Users() const = 0;
	virtual size_t Bytes() const = 0;
	// Reads: the queries sent to read users' chats (each for up to kUsersPerRead users).
	virtual uint64_t Reads() const = 0;
};

} // namespace chat_outboxd
