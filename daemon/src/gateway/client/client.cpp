// daemon/src/gateway/client/client.cpp - see client.hpp.
#include "gateway/client/client.hpp"

namespace chat_outboxd {

void
KillAsync(struct lws *wsi)
{
	if (wsi)
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

void
WriteCloseFrame(struct lws *wsi, int code, const std::string &reason)
{
	std::string frame(LWS_PRE, '\0');
	frame.push_back(static_cast<char>((code >> 8) & 0xFF));
	frame.push_back(static_cast<char>(code & 0xFF));
	frame += reason;
	size_t n = frame.size() - LWS_PRE;
	// Opcode 4 is lws' internal LWS_WRITE_CLOSE (private in 4.1.6 headers).
	lws_write(wsi, reinterpret_cast<unsigned char *>(&frame[LWS_PRE]), n, static_cast<enum lws_write_protocol>(4));
}

} // namespace chat_outboxd
