// daemon/src/gateway/core/message_json.cpp - see message_json.hpp.
#include "gateway/core/message_json.hpp"

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
	return j;
}

std::string
SocketIoMessageEvent(const InboxMessage &m)
{
	return "42" + DumpJson(nlohmann::json::array({"message", MessageObject(m), std::to_string(m.seq)}));
}

std::string
PlainMessageFrame(const InboxMessage &m)
{
	return DumpJson({{"type", "message"}, {"message", MessageObject(m)}});
}

} // namespace chat_outboxd
