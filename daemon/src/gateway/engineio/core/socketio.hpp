// daemon/src/gateway/engineio/core/socketio.hpp - the Socket.IO protocol 5 codec (the payload of an Engine.IO
// message packet): decoding what a client may send, encoding what the server sends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace chat_outboxd::sio {

enum class PacketType : char {
	Connect = '0',
	Disconnect = '1',
	Event = '2',
	Ack = '3',
	ConnectError = '4',
	BinaryEvent = '5',
	BinaryAck = '6',
};

struct Packet {
	PacketType type = PacketType::Event;
	std::string nsp = "/";
	std::optional<uint64_t> ack_id;
	nlohmann::json data; // null when the packet has no payload
};

// DecodeClientPacket accepts only what a client may legitimately send: CONNECT (object or no
// payload), DISCONNECT, EVENT (array whose first element is a non-reserved string) and ACK (array).
// Binary packets, CONNECT_ERROR, bad JSON and trailing garbage are refused with *error set.
bool DecodeClientPacket(std::string_view text, Packet *out, std::string *error);

// IsReservedEvent: names the client library itself uses; a peer must never send them.
bool IsReservedEvent(std::string_view name);

// Encoders return the Socket.IO packet text (without the Engine.IO "4" prefix).
std::string EncodeConnectOk(const std::string &nsp, const std::string &sid, const std::string &pid);
std::string EncodeConnectError(const std::string &nsp, const std::string &message, const nlohmann::json &data);
std::string EncodeAck(const std::string &nsp, uint64_t id, const nlohmann::json &args); // args: an array
std::string EncodeEvent(const std::string &nsp, const nlohmann::json &name_and_args);   // ["name", ...]

} // namespace chat_outboxd::sio
