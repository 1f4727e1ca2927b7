// daemon/src/gateway/engineio/core/socketio.cpp - see socketio.hpp.
#include "gateway/engineio/core/socketio.hpp"

namespace chat_outboxd::sio {

namespace {

// Prefix is the part that precedes the JSON: the namespace (when not "/") and an ack id.
std::string
Prefix(char type, const std::string &nsp, std::optional<uint64_t> id)
{
	std::string s(1, type);
	if (nsp != "/")
		s += nsp + ",";
	if (id)
		s += std::to_string(*id);
	return s;
}

bool
Fail(std::string *error, const char *why)
{
	*error = why;
	return false;
}

} // namespace

bool
IsReservedEvent(std::string_view name)
{
	return name == "connect" || name == "connect_error" || name == "disconnect" || name == "disconnecting" ||
	       name == "newListener" || name == "removeListener";
}

bool
DecodeClientPacket(std::string_view text, Packet *out, std::string *error)
{
	if (text.empty())
		return Fail(error, "empty packet");
	char t = text[0];
	if (t < '0' || t > '6')
		return Fail(error, "unknown packet type");
	out->type = static_cast<PacketType>(t);
	if (out->type == PacketType::BinaryEvent || out->type == PacketType::BinaryAck)
		return Fail(error, "binary packets are not supported");
	if (out->type == PacketType::ConnectError)
		return Fail(error, "CONNECT_ERROR from a client");
	size_t i = 1;

	out->nsp = "/";
	if (i < text.size() && text[i] == '/') {
		size_t comma = text.find(',', i);
		size_t end = comma == std::string_view::npos ? text.size() : comma;
		out->nsp.assign(text.substr(i, end - i));
		i = comma == std::string_view::npos ? text.size() : comma + 1;
	}

	out->ack_id.reset();
	size_t digits = i;
	while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
		digits++;
	if (digits > i) {
		if (digits - i > 15) // beyond what JavaScript counts exactly; no real client gets there
			return Fail(error, "ack id too long");
		out->ack_id = std::stoull(std::string(text.substr(i, digits - i)));
		i = digits;
	}

	out->data = nullptr;
	if (i < text.size()) {
		nlohmann::json j = nlohmann::json::parse(text.substr(i), nullptr, false);
		if (j.is_discarded())
			return Fail(error, "invalid JSON");
		out->data = std::move(j);
	}

	switch (out->type) {
	case PacketType::Connect:
		if (!out->data.is_null() && !out->data.is_object())
			return Fail(error, "CONNECT payload is not an object");
		if (out->ack_id)
			return Fail(error, "CONNECT with an ack id");
		break;
	case PacketType::Disconnect:
		if (!out->data.is_null() || out->ack_id)
			return Fail(error, "DISCONNECT with a payload");
		break;
	case PacketType::Event:
		if (!out->data.is_array() || out->data.empty() || !out->data[0].is_string())
			return Fail(error, "EVENT payload is not [name, ...]");
		if (IsReservedEvent(out->data[0].get_ref<const std::string &>()))
			return Fail(error, "reserved event name");
		break;
	case PacketType::Ack:
		if (!out->data.is_array() || !out->ack_id)
			return Fail(error, "ACK without id or array");
		break;
	default:
		return Fail(error, "unexpected packet type");
	}
	return true;
}

std::string
EncodeConnectOk(const std::string &nsp, const std::string &sid, const std::string &pid)
{
	nlohmann::json j = {{"sid", sid}};
	if (!pid.empty())
		j["pid"] = pid;
	return Prefix('0', nsp, std::nullopt) + j.dump();
}

std::string
EncodeConnectError(const std::string &nsp, const std::string &message, const nlohmann::json &data)
{
	nlohmann::json j = {{"message", message}};
	if (!data.is_null())
		j["data"] = data;
	return Prefix('4', nsp, std::nullopt) + j.dump();
}

std::string
EncodeAck(const std::string &nsp, uint64_t id, const nlohmann::json &args)
{
	return Prefix('3', nsp, id) + args.dump();
}

std::string
EncodeEvent(const std::string &nsp, const nlohmann::json &name_and_args)
{
	return Prefix('2', nsp, std::nullopt) + name_and_args.dump();
}

} // namespace chat_outboxd::sio
