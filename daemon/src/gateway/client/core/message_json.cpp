// daemon/src/gateway/client/core/message_json.cpp - see message_json.hpp.
#include "gateway/client/core/message_json.hpp"

#include <cerrno>
#include <cstdlib>

namespace chat_outboxd {

bool
JsonInteger(const nlohmann::json &v, int64_t *out)
{
	if (v.is_number_integer()) {
		if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
			return false;
		*out = v.get<int64_t>();
		return true;
	}
	if (v.is_string()) {
		const std::string &s = v.get_ref<const std::string &>();
		if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
			return false;
		errno = 0;
		long long n = std::strtoll(s.c_str(), nullptr, 10);
		if (errno == ERANGE)
			return false;
		*out = n;
		return true;
	}
	return false;
}

std::string
DumpJson(const nlohmann::json &j)
{
	return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json
MessageObject(const InboxMessage &m)
{
	nlohmann::json j = {{"id", m.id}, {"chat_id", m.chat_id}, {"body", m.body}};
	if (m.created_at.empty())
		j["created_at"] = nullptr;
	else
		j["created_at"] = m.created_at;
	j["sender"] = m.sender ? nlohmann::json(*m.sender) : nlohmann::json(nullptr);
	j["seq"] = m.seq;
	AddChangeFields(j, m.edited_at, m.deleted_at);
	return j;
}

void
AddChangeFields(nlohmann::json &m, const std::string &edited_at, const std::string &deleted_at)
{
	if (!deleted_at.empty()) {
		m["body"] = nullptr;
		m["deleted_at"] = deleted_at;
	} else if (!edited_at.empty())
		m["edited_at"] = edited_at;
}

const char *
EventName(const InboxMessage &m)
{
	if (m.change == Change::None)
		return "message";
	return m.change == Change::Deleted || !m.deleted_at.empty() ? "message_deleted" : "message_edited";
}

nlohmann::json
EventObject(const InboxMessage &m)
{
	if (m.change == Change::None)
		return MessageObject(m);
	auto at = [](const std::string &s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
	if (m.change == Change::Deleted || !m.deleted_at.empty())
		return {{"id", m.target}, {"chat_id", m.chat_id}, {"deleted_at", at(m.deleted_at)}, {"seq", m.seq}};
	return {{"id", m.target},
	        {"chat_id", m.chat_id},
	        {"body", m.body},
	        {"edited_at", at(m.edited_at)},
	        {"sender", m.sender ? nlohmann::json(*m.sender) : nlohmann::json(nullptr)},
	        {"seq", m.seq}};
}

std::string
SocketIoMessageEvent(const InboxMessage &m)
{
	return "42" + DumpJson(nlohmann::json::array({EventName(m), EventObject(m), std::to_string(m.seq)}));
}

std::string
PlainMessageFrame(const InboxMessage &m)
{
	return DumpJson({{"type", EventName(m)}, {"message", EventObject(m)}});
}

} // namespace chat_outboxd
