// daemon/src/gateway/client/plain_client.hpp - PlainClient: the client kind of one plain /ws connection
// (PlainWs owns them: gateway/plain_ws/plain_ws.hpp).
#pragma once

#include "gateway/client/client.hpp"

namespace chat_outboxd {

// PlainClient is one /ws connection.
struct PlainClient final : Client {
	explicit PlainClient(Endpoint &e) : Client(Kind::Plain, e) {}
	struct lws *OpenWebSocket() const override { return wsi; }
	void ForgetWsi(struct lws *w) override
	{
		if (wsi == w)
			wsi = nullptr;
	}
	bool WriteControl(struct lws *w) override;

	struct lws *wsi = nullptr;
	// Dead-peer detection: a WebSocket ping every --ping-interval; silence for a whole interval
	// after one closes the connection.
	Deadline keepalive{Deadline::Kind::Keepalive, this};
	bool heard = false;     // anything arrived since the last keepalive tick
	bool ping_sent = false; // a ping went out at the last tick
	bool ping_due = false;  // write a ping at the next writeable callback

  private:
	void AskWriteable() override;
};

} // namespace chat_outboxd
