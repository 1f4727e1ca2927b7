// daemon/src/gateway/plain_ws/core/plain_ws_protocol.cpp - see plain_ws_protocol.hpp.
#include "gateway/plain_ws/core/plain_ws_protocol.hpp"

#include "gateway/client/core/message_json.hpp"

namespace chat_outboxd::plainws {

namespace {

bool
Fail(std::string *error, const char *why)
{
	*error = why;
	return false;
}

} // namespace

bool
DecodeClientFrame(std::string_view text, ClientFrame *out, std::string *error)
{
	nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
	if (j.is_discarded() || !j.is_object())
		return Fail(error, "frame is not a JSON object");
	auto type = j.find("type");
	if (type == j.end() || !type->is_string())
		return Fail(error, "frame has no type");
	auto ref = j.find("ref");
	out->ref = nullptr;
	if (ref != j.end()) {
		if (!ref->is_string() && !ref->is_number() && !ref->is_null())
			return Fail(error, "ref must be a string or a number");
		out->ref = *ref;
	}
	const std::string &t = type->get_ref<const std::string &>();
	if (t == "ping") {
		out->type = FrameType::Ping;
		return true;
	}
	if (t == "history" || t == "read" || t == "typing" || t == "presence") {
		// Their arguments are checked by the conversation's rules, which answer bad ones with an error.
		out->type = FrameType::Conversation;
		out->name = t;
		out->arg = std::move(j);
		return true;
	}
	if (t == "edit" || t == "delete") {
		out->type = t == "edit" ? FrameType::Edit : FrameType::Delete;
		auto id = j.find("message_id");
		if (id == j.end() || !id->is_string())
			return Fail(error, "message_id must be a string");
		out->message_id = id->get<std::string>();
		if (out->type == FrameType::Edit) {
			auto body = j.find("body");
			if (body == j.end() || !body->is_string())
				return Fail(error, "body must be a string");
			out->body = body->get<std::string>();
		}
		return true;
	}
	if (t == "send")
		out->type = FrameType::Send;
	else if (t == "join")
		out->type = FrameType::Join;
	else if (t == "leave")
		out->type = FrameType::Leave;
	else
		return Fail(error, "unknown frame type");
	auto chat = j.find("chat_id");
	if (chat == j.end() || !JsonInteger(*chat, &out->chat_id))
		return Fail(error, "chat_id must be an integer");
	if (out->type == FrameType::Send) {
		auto body = j.find("body");
		if (body == j.end() || !body->is_string())
			return Fail(error, "body must be a string");
		out->body = body->get<std::string>();
		auto key = j.find("client_msg_id");
		out->client_msg_id.reset();
		if (key != j.end() && !key->is_null()) {
			if (!key->is_string())
				return Fail(error, "client_msg_id must be a string");
			out->client_msg_id = key->get<std::string>();
		}
	}
	return true;
}

std::string
AckFrame(const nlohmann::json &ref, const nlohmann::json &fields)
{
	nlohmann::json j = {{"type", "ack"}, {"ref", ref}};
	for (auto it = fields.begin(); it != fields.end(); ++it)
		j[it.key()] = it.value();
	return DumpJson(j);
}

std::string
ErrorFrame(const nlohmann::json &ref, const nlohmann::json &error)
{
	return DumpJson({{"type", "error"}, {"ref", ref}, {"error", error}});
}

} // namespace chat_outboxd::plainws
