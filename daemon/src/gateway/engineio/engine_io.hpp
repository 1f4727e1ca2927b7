// daemon/src/gateway/engineio/engine_io.hpp - Engine.IO sessions (docs/protocols/socketio.md): the handshake,
// the server-driven heartbeat, the two transports (HTTP long-polling in http_polling.cpp, WebSocket
// in engine_io.cpp) and the upgrade from one to the other (Session::Transport), closing. What a
// session carries, Socket.IO packets, goes to SioNamespace.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <libwebsockets.h>

#include "base/core/config.hpp"
#include "gateway/client/conn.hpp"
#include "gateway/http/http_io.hpp"

namespace chat_outboxd {

class Hub;
class SioNamespace;

class EngineIo final : public Endpoint {
  public:
	EngineIo(Hub &hub, SioNamespace &sio, const HttpWriter &http, const Config &cfg);

	// --- WebSocket transport
	// AdmitWebSocket: a WebSocket handshake without sid may open a session from peer (the
	// unauthenticated-session caps).
	bool AdmitWebSocket(const std::string &peer);
	// CanProbe: a WebSocket with this sid may upgrade its session (a live polling session with no
	// probe under way).
	bool CanProbe(const std::string &sid) const;
	// OnWebSocketEstablished opens a session on wsi, or makes wsi the probe of the session in ?sid=;
	// false closes wsi.
	bool OnWebSocketEstablished(struct lws *wsi, Conn *c, const QueryArgs &q, const std::string &peer);
	int OnWebSocketReceive(struct lws *wsi, Conn *c, const void *in, size_t len);
	int OnWebSocketWriteable(struct lws *wsi, Conn *c);
	void OnWebSocketClosed(struct lws *wsi, Conn *c);

	// --- polling transport (http_polling.cpp)
	// OnPolling answers a request to /socket.io/: preflight, errors, the handshake, or a held GET or
	// a POST of a session.
	int OnPolling(struct lws *wsi, Conn *c, const QueryArgs &q);
	int OnPollBody(struct lws *wsi, Conn *c, const void *in, size_t len);
	int OnPollBodyDone(struct lws *wsi, Conn *c);
	// WritePollResponse completes a held GET with the queued packets (or "1", or the upgrade's "6").
	int WritePollResponse(struct lws *wsi, Conn *c);
	void OnHttpClosed(struct lws *wsi, Conn *c);

	// --- Endpoint
	void Close(Client &c, int code, const std::string &reason) override;
	void Drop(Client &c) override;
	void OnDeadline(Deadline &d) override;
	void ForEach(const std::function<void(Client &)> &fn) const override;
	void ForgetAll() override { sessions_.clear(); }

  private:
	// FindSession is the session with engine id sid, or null.
	std::shared_ptr<Session> FindSession(const std::string &sid) const;
	// NewSession is null when the unauthenticated-session caps are reached for peer.
	std::shared_ptr<Session> NewSession(Session::Transport transport, const std::string &peer);
	void StartHeartbeat(Session &s);
	void OnPingTimer(Session &s);
	void OnPongDeadline(Session &s);
	void OnProbeTimeout(Session &s);
	void OnTokenExpired(Session &s);
	// DropProbe ends the upgrade attempt; tell_client closes the probe with a close frame.
	void DropProbe(Session &s, bool tell_client);
	// ForgetProbe puts the session back on polling once its probe is gone.
	void ForgetProbe(Session &s);
	// HandleEngineText handles one inbound Engine.IO packet; false = protocol violation.
	bool HandleEngineText(const std::shared_ptr<Session> &s, std::string_view text);
	bool HandleProbeText(const std::shared_ptr<Session> &s, struct lws *wsi, std::string_view text);

	Hub &hub_;
	SioNamespace &sio_;
	const HttpWriter &http_;
	const Config &cfg_;
	std::unordered_map<std::string, std::shared_ptr<Session>> sessions_; // by engine sid
};

} // namespace chat_outboxd
