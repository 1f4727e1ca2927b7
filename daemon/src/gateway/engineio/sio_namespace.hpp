// daemon/src/gateway/engineio/sio_namespace.hpp - the Socket.IO "/" namespace on an Engine.IO session: CONNECT
// with JWT auth and connection-state recovery, the join/leave/send events with acks, DISCONNECT.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/core/config.hpp"
#include "gateway/client/session.hpp"
#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/engineio/core/recovery.hpp"

namespace chat_outboxd {

class Catchup;
class ClientSends;
class Conversation;
class Hub;

class SioNamespace {
  public:
	SioNamespace(Hub &hub, Catchup &catchup, ClientSends &sends, Conversation &conv, const Config &cfg);

	// HandlePacket handles one Socket.IO packet (an Engine.IO message); false = protocol violation.
	bool HandlePacket(const std::shared_ptr<Session> &s, std::string_view text);
	// EndSocket ends the "/" socket of a session whose engine session goes on (a DISCONNECT from the
	// client, or the token's exp): out of its rooms, its token's deadline and any replay gone with it,
	// and counted as unauthenticated again. A new CONNECT on the session starts afresh.
	void EndSocket(Session &s);

  private:
	void OnConnect(const std::shared_ptr<Session> &s, const nlohmann::json &auth, const std::string &nsp);
	// AdmitSocket answers CONNECT for an authorized socket and admits it (with its catch-up).
	void AdmitSocket(const std::shared_ptr<Session> &s, const AuthResult &ar, sio::Resume resume);
	void OnEvent(const std::shared_ptr<Session> &s, const nlohmann::json &args, std::optional<uint64_t> ack);
	void Ack(Session &s, std::optional<uint64_t> ack, nlohmann::json value);

	Hub &hub_;
	Catchup &catchup_;
	ClientSends &sends_;
	Conversation &conv_;
	const Config &cfg_;
};

} // namespace chat_outboxd
