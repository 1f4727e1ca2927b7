// daemon/src/gateway/client/plain_client.cpp - see plain_client.hpp.
#include "gateway/client/plain_client.hpp"

namespace chat_outboxd {

void
PlainClient::AskWriteable()
{
	if (wsi)
		lws_callback_on_writable(wsi);
}

bool
PlainClient::WriteControl(struct lws *w)
{
	if (!ping_due)
		return true;
	ping_due = false;
	// lws 4.1 swallows empty pongs without a RECEIVE_PONG callback: the ping carries a payload.
	unsigned char ping[LWS_PRE + 2] = {};
	ping[LWS_PRE] = 'k';
	ping[LWS_PRE + 1] = 'a';
	return lws_write(w, ping + LWS_PRE, 2, LWS_WRITE_PING) >= 2;
}

} // namespace chat_outboxd
