// daemon/src/gateway/plain_ws/core/plain_ws_protocol.hpp - the JSON protocol of the plain WebSocket endpoint /ws.
//
// Client → server, one JSON object per text frame:
//   {"type":"send","ref":R,"chat_id":N,"body":"..."[,"client_msg_id":"..."]}   {"type":"join","ref":R,"chat_id":N}
//   {"type":"leave","ref":R,"chat_id":N}               {"type":"ping","ref":R}
//   {"type":"edit","ref":R,"message_id":U,"body":"..."} {"type":"delete","ref":R,"message_id":U}
//   {"type":"history"|"read"|"typing"|"presence","ref":R,...}: checked by the conversation's rules
// `ref` is optional and echoed back verbatim (string or number).
// Server → client: message, ack, error, welcome, pong (see docs/client-protocol.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chat_outboxd::plainws {

// Conversation: history, read, typing or presence (gateway/conversation/conversation.*), with the frame as its argument.
enum class FrameType { Send,
	                   Join,
	                   Leave,
	                   Ping,
	                   Conversation,
	                   Edit,
	                   Delete };

struct ClientFrame {
	FrameType type = FrameType::Ping;
	nlohmann::json ref; // null when absent
	int64_t chat_id = 0;
	std::string body;
	std::optional<std::string> client_msg_id; // Send: when given (its rule: ClientSends::Refusal)
	std::string message_id;                   // Edit, Delete
	std::string name;                         // Conversation: the event's name
	nlohmann::json arg;                       // Conversation: the whole frame
};

// DecodeClientFrame: false with *error for anything that is not one of the frames above.
bool DecodeClientFrame(std::string_view text, ClientFrame *out, std::string *error);

std::string AckFrame(const nlohmann::json &ref, const nlohmann::json &fields);  // {"type":"ack","ref":..,...fields}
std::string ErrorFrame(const nlohmann::json &ref, const nlohmann::json &error); // {"type":"error","ref":..,"error":..}

} // namespace chat_outboxd::plainws
