// daemon/src/gateway/client/conn.hpp - Conn: what lws' per-connection user space points to, whichever
// part answers the connection (plain HTTP, Engine.IO's transports, /ws).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gateway/client/plain_client.hpp"
#include "gateway/client/session.hpp"

namespace chat_outboxd {

// Conn is what lws' per-connection user space points to.
struct Conn {
	enum class Role : uint8_t { Http,
		                        PollGet,
		                        PollPost,
		                        SioWs,
		                        SioProbe,
		                        Plain };
	Role role = Role::Http;
	std::shared_ptr<Session> session;
	std::shared_ptr<PlainClient> plain;
	std::string rx; // WebSocket message or POST body being assembled
	bool rx_too_big = false;
	bool cors = false;           // a /socket.io/ request: CORS headers for an allowed Origin
	bool response_ready = false; // an immediate HTTP response waits for HTTP_WRITEABLE
	bool close_after = false;    // that response ends the connection (the rest of the request is not read)
	int status = 200;
	std::string content_type, body;
};

} // namespace chat_outboxd
