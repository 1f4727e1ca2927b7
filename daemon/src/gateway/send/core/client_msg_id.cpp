// daemon/src/gateway/send/core/client_msg_id.cpp - see client_msg_id.hpp.
#include "gateway/send/core/client_msg_id.hpp"

namespace chat_outboxd {

std::optional<std::string>
ClientMsgIdError(std::string_view id)
{
	if (id.empty() || id.size() > kMaxClientMsgIdBytes)
		return "client_msg_id must be 1 to " + std::to_string(kMaxClientMsgIdBytes) + " bytes";
	for (unsigned char c : id)
		if (c < 0x20 || c == 0x7f)
			return std::string("client_msg_id must not contain control characters");
	return std::nullopt;
}

} // namespace chat_outboxd
