// daemon/src/gateway/plain_ws/plain_ws.hpp - the plain JSON WebSocket endpoint /ws for clients without
// Socket.IO: token from ?token= or "Authorization: Bearer", rooms from the token or ?chats=, catch-up
// from ?since=, send/join/leave/ping frames (core/plain_ws_protocol.hpp) and a keepalive.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <libwebsockets.h>
#include <nlohmann/json.hpp>

#include "base/core/config.hpp"
#include "gateway/client/conn.hpp"
#include "gateway/auth/core/gateway_auth.hpp"

namespace chat_outboxd {

class Catchup;
class ClientSends;
class Conversation;
class Hub;

class PlainWs final : public Endpoint {
  public:
	PlainWs(Hub &hub, Catchup &catchup, ClientSends &sends, Conversation &conv, const Config &cfg);

	// OnEstablished authorizes a new /ws connection (a refusal is a close frame); false closes wsi.
	bool OnEstablished(struct lws *wsi, Conn *c);
	int OnReceive(struct lws *wsi, Conn *c, const void *in, size_t len);
	void OnPong(Conn *c);
	int OnWriteable(struct lws *wsi, Conn *c);
	void OnClosed(struct lws *wsi, Conn *c);

	// --- Endpoint
	void Close(Client &c, int code, const std::string &reason) override;
	void Drop(Client &c) override;
	void OnDeadline(Deadline &d) override;
	void ForEach(const std::function<void(Client &)> &fn) const override;
	void ForgetAll() override { plains_.clear(); }

  private:
	bool HandleText(const std::shared_ptr<PlainClient> &p, std::string_view text);
	// Welcome admits an authorized client: the welcome frame, its rooms, its catch-up from since (-1: none).
	void Welcome(const std::shared_ptr<PlainClient> &p, const AuthResult &ar, int64_t since);
	// MessageAnswer: what a send, edit or delete answers with: an ack {message} or an error frame, to
	// the client while it is open.
	std::function<void(nlohmann::json)> MessageAnswer(const std::shared_ptr<PlainClient> &p, nlohmann::json ref);
	void OnKeepalive(PlainClient &p);

	Hub &hub_;
	Catchup &catchup_;
	ClientSends &sends_;
	Conversation &conv_;
	const Config &cfg_;
	std::unordered_map<PlainClient *, std::shared_ptr<PlainClient>> plains_;
};

} // namespace chat_outboxd
