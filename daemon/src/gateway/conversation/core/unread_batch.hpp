// daemon/src/gateway/conversation/core/unread_batch.hpp - UnreadBatch: the users of one chat_state read of a
// chat (gateway/conversation/receipts.*). Every join of a chat that waits while the chat's read is in flight
// is answered by the next read, which asks the cursor and unread count of all their users at once (a text[]
// of users, one statement), so a storm of N joins into one chat costs O(reads in flight) round trips.
//
// Rules: a user asked twice (two tabs) is asked once; the user without a usable sub (no cursor, every
// message unread) is NULL in the array and answered by a row whose user is NULL. A batch is capped by
// kUnreadBatchUsers joins and kUnreadBatchBytes of the array's text (UnreadUserBytes), so one statement and
// its answer stay bounded however big the room (and its work: each distinct cursor counts up to receipts.cpp's
// kUnreadCap rows, so a statement never holds the gateway's connection long ahead of the sends behind it); the
// joins past the caps wait for the next read.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace chat_outboxd::conv {

constexpr size_t kUnreadBatchUsers = 500;
constexpr size_t kUnreadBatchBytes = 64 * 1024;

// UnreadUserBytes: what a user adds to the array's text (its element, quoted and escaped, and a comma).
size_t UnreadUserBytes(const std::optional<std::string> &user);

class UnreadBatch {
  public:
	// Add asks for user (nullopt: the user without a usable sub); returns its index among Users().
	size_t Add(const std::optional<std::string> &user);
	// Find: the index of an answer row's user, or npos when it was not asked.
	size_t Find(const std::optional<std::string> &user) const;
	static constexpr size_t npos = static_cast<size_t>(-1);
	const std::vector<std::optional<std::string>> &Users() const { return users_; }
	// ArrayLiteral: Users() as a Postgres text[] literal ({"a","b\"c",NULL}).
	std::string ArrayLiteral() const;

  private:
	std::vector<std::optional<std::string>> users_;
	std::unordered_map<std::string, size_t> index_;
	size_t no_identity_ = npos;
};

} // namespace chat_outboxd::conv
