// daemon/src/gateway/client/session.cpp - see session.hpp.
#include "gateway/client/session.hpp"

namespace chat_outboxd {

void
Session::AskWriteable()
{
	if (transport == Transport::WebSocket && ws)
		lws_callback_on_writable(ws);
	else if (held_get)
		lws_callback_on_writable(held_get);
}

} // namespace chat_outboxd
