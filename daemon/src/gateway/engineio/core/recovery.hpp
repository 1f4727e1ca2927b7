// daemon/src/gateway/engineio/core/recovery.hpp - Socket.IO connection-state recovery as the gateway does it
// (docs/protocols/socketio.md, 'Connection-state recovery'): where a CONNECT asks to resume from, and
// the pid handed out in the CONNECT reply.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace chat_outboxd::sio {

struct Resume {
	std::string pid;    // the client's pid when it is usable (handed back as is), else empty
	int64_t after = -1; // replay every message with a higher seq; -1: no replay
};

// ReadResume reads a CONNECT's auth: auth.offset (what socket.io-client sends), else auth.since (an
// app's own offset), else the seq inside a pid we issued. Negative or malformed values count as absent.
Resume ReadResume(const nlohmann::json &auth);

// MakePid is "<random>.<high_seq>" (the highest inbox seq at connect), so a client that received
// nothing before it lost the connection still resumes from there. The gateway admits no client before
// it knows that seq (Hub::Ready); should one be asked for anyway (high_seq < 0), it carries 0: a replay
// of everything is the price of a resume that can lose nothing.
std::string MakePid(const std::string &random, int64_t high_seq);

} // namespace chat_outboxd::sio
