// daemon/src/inbox/core/user_id.cpp - see user_id.hpp.
#include "inbox/core/user_id.hpp"

namespace chat_outboxd {

bool
IsUserId(std::string_view s)
{
	if (s.empty() || s.size() > kMaxUserIdBytes)
		return false;
	for (char c : s)
		if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
			return false;
	return true;
}

} // namespace chat_outboxd
