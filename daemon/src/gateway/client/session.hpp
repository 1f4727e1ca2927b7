// daemon/src/gateway/client/session.hpp - Session: the client kind of an Engine.IO session carrying
// the Socket.IO "/" namespace, on either transport (EngineIo owns them: gateway/engineio/engine_io.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "gateway/client/client.hpp"
#include "gateway/engineio/core/engineio.hpp"

namespace chat_outboxd {

// Session is an Engine.IO session carrying the Socket.IO "/" namespace, on either transport.
struct Session final : Client {
	// Transport: Polling, Probing, Upgrading or WebSocket (gateway/engineio/core/engineio.hpp states the rules). probe is
	// set exactly in Probing and Upgrading; Closing is the client's Life, on any transport.
	using Transport = eio::Transport;
	// Beat: what the heartbeat deadline is (the server pings, docs/protocols/socketio.md, 'Heartbeat').
	//   NextPing:     the next "2" is due --ping-interval after the handshake or the last pong.
	//   AwaitingPong: a "2" went out; no "3" by --ping-timeout closes the session.
	enum class Beat : uint8_t { NextPing,
		                        AwaitingPong };

	Session(Endpoint &e, Transport t) : Client(Kind::SocketIo, e), transport(t) {}
	struct lws *OpenWebSocket() const override { return transport == Transport::WebSocket ? ws : nullptr; }
	void ForgetWsi(struct lws *wsi) override
	{
		if (ws == wsi)
			ws = nullptr;
	}

	std::string sid;                      // engine session id
	std::string socket_id;                // the namespace socket id, not the engine sid (docs/protocols/socketio.md, 'Layers and ids')
	std::string query_token;              // ?token= from the handshake, used when auth has none
	std::string peer;                     // client IP address, for --max-unauthenticated-per-address
	bool counted_unauthenticated = false; // in the Hub's unauthenticated-session counts (Hub::SetPending)
	Transport transport;
	struct lws *ws = nullptr;    // the WebSocket once upgraded (or from the start)
	struct lws *probe = nullptr; // the WebSocket being probed for the upgrade
	bool probe_pong_due = false; // "3probe" is to be written on the probe
	struct lws *held_get = nullptr;
	bool post_busy = false;
	Beat beat = Beat::NextPing;
	int64_t pings_before_connect = 0; // pings sent while the namespace CONNECT is still missing
	Deadline heartbeat{Deadline::Kind::Heartbeat, this};
	Deadline probe_timer{Deadline::Kind::Probe, this}; // --upgrade-timeout for the probe WebSocket

  private:
	void AskWriteable() override;
};

} // namespace chat_outboxd
