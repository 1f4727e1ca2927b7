// daemon/src/gateway/auth/core/member_change.cpp - see member_change.hpp.
#include "gateway/auth/core/member_change.hpp"

#include "gateway/client/core/message_json.hpp"
#include "inbox/core/user_id.hpp"

namespace chat_outboxd {

bool
ParseMemberChange(std::string_view payload, MemberChange *out)
{
	if (payload == "*") {
		*out = MemberChange{};
		return true;
	}
	if (payload.size() < 4 || (payload[0] != '+' && payload[0] != '-'))
		return false;
	size_t space = payload.find(' ');
	if (space == std::string_view::npos)
		return false;
	int64_t chat = 0;
	if (!JsonInteger(std::string(payload.substr(1, space - 1)), &chat))
		return false;
	std::string_view user = payload.substr(space + 1);
	if (!IsUserId(user))
		return false;
	out->kind = payload[0] == '+' ? MemberChange::Kind::Added : MemberChange::Kind::Removed;
	out->chat = chat;
	out->user = std::string(user);
	return true;
}

} // namespace chat_outboxd
