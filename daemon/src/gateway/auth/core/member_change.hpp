// daemon/src/gateway/auth/core/member_change.hpp - what a NOTIFY on chat_outbox_members says (the triggers
// of sql/parts/members.sql): "+<chat_id> <user_id>" added, "-<chat_id> <user_id>" removed, "*" a
// statement too big to list (every user's chats are to be read again).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outboxd {

constexpr const char *kMembersChannel = "chat_outbox_members";

struct MemberChange {
	enum class Kind : uint8_t { Added,
		                        Removed,
		                        All };
	Kind kind = Kind::All;
	int64_t chat = 0;
	std::string user;
};

// ParseMemberChange: false for anything else (a payload of some other writer on the channel).
bool ParseMemberChange(std::string_view payload, MemberChange *out);

} // namespace chat_outboxd
