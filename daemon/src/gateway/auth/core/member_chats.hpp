// daemon/src/gateway/auth/core/member_chats.hpp - a user's chats as a gateway holds them with --authz
// membership: at most --max-member-chats of them, the first by chat id, and whether that is all of
// them (docs/client-protocol.md, Membership: a user in more chats than the bound).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chat_outboxd {

struct MemberChats {
	// All: chats are every chat of the user. First: the user has more; chats are the first by id.
	enum class Extent : uint8_t { All,
		                          First };
	std::vector<int64_t> chats; // sorted, unique, at most the bound
	Extent extent = Extent::All;

	// Read builds the list from the rows a read returned (any order, at most bound + 1 of the first
	// chats by id, so that one more than the bound says the list is cut).
	static MemberChats Read(std::vector<int64_t> rows, size_t bound);
	bool Cut() const { return extent == Extent::First; }
	// Answer to "is chat one of the user's?": Yes or No from the list, Ask when only the database
	// knows (the list is cut and chat is not in it).
	enum class Verdict : uint8_t { Yes,
		                           No,
		                           Ask };
	Verdict Has(int64_t chat) const;
	// Add: chat became one of the user's; true when it is in the list after (the list keeps the
	// first `bound`: a chat past the last of a cut list stays out, one before it pushes the last out).
	bool Add(int64_t chat, size_t bound);
	// Remove: chat is no longer one of the user's; true when it was in the list. A cut list that
	// lost one is no longer the first `bound` chats: the caller reads it again.
	bool Remove(int64_t chat);
};

// Gone: of the chats `asked` about in a read (what the user's sockets held), those the read no longer
// found among the user's (neither in its first chats nor among those it checked): the removals a
// gateway missed, never a chat that only fell out of the first `bound`. All three sorted.
std::vector<int64_t> Gone(const std::vector<int64_t> &asked, const std::vector<int64_t> &first,
                          const std::vector<int64_t> &still);

} // namespace chat_outboxd
