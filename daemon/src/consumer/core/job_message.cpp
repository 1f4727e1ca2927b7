// daemon/src/consumer/core/job_message.cpp - see job_message.hpp.
#include "consumer/core/job_message.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <regex>

#include <nlohmann/json.hpp>

#include "inbox/core/user_id.hpp"

namespace chat_outboxd {

namespace {

std::optional<ChatMessage>
Poison(std::string *reason, const std::string &why)
{
	*reason = "invalid message: " + why;
	return std::nullopt;
}

bool
ParseInt64(const std::string &s, int64_t *out)
{
	if (s.empty() || s.size() > 20)
		return false;
	for (size_t i = 0; i < s.size(); i++)
		if (!std::isdigit(static_cast<unsigned char>(s[i])) && !(i == 0 && s[i] == '-' && s.size() > 1))
			return false;
	errno = 0;
	long long v = std::strtoll(s.c_str(), nullptr, 10);
	if (errno == ERANGE)
		return false;
	*out = v;
	return true;
}

// Postgres would reject a malformed timestamp and fail the whole batch, so only a strict
// ISO 8601 shape is passed on; anything else is stored as NULL rather than poisoning the job.
bool
LooksLikeTimestamp(const std::string &s)
{
	static const std::regex re(
	    R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?$)");
	return s.size() < 64 && std::regex_match(s, re);
}

// ReadUuid reads field `name` of j as a uuid, lower-cased; false when it is missing or not one.
bool
ReadUuid(const nlohmann::json &j, const char *name, std::string *out)
{
	auto v = j.find(name);
	if (v == j.end() || !v->is_string() || !IsUuid(v->get<std::string>()))
		return false;
	*out = v->get<std::string>();
	for (char &c : *out) // Postgres prints uuids lower-case; ids are matched against its output
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	return true;
}

// FromJson reads a message, or with `change` set an edit or delete: the same fields, and message_id,
// version and edited_at / deleted_at; a delete carries no body.
std::optional<ChatMessage>
FromJson(const nlohmann::json &j, Change change, std::string *reason)
{
	ChatMessage m;
	m.change = change;

	auto id = j.find("id");
	if (id == j.end() || id->is_null())
		return Poison(reason, "id missing");
	if (!ReadUuid(j, "id", &m.id))
		return Poison(reason, "id is not a uuid string");

	auto chat = j.find("chat_id");
	if (chat == j.end() || chat->is_null())
		return Poison(reason, "chat_id missing");
	if (chat->is_number_unsigned()) { // checked first: nlohmann counts unsigned as integer too
		if (chat->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
			return Poison(reason, "chat_id out of range");
		m.chat_id = static_cast<int64_t>(chat->get<uint64_t>());
	} else if (chat->is_number_integer())
		m.chat_id = chat->get<int64_t>();
	else if (!chat->is_string() || !ParseInt64(chat->get<std::string>(), &m.chat_id))
		return Poison(reason, "chat_id is not an integer");

	// A delete's body is stored empty, whatever the payload says.
	auto body = j.find("body");
	if (change != Change::Deleted) {
		if (body == j.end() || body->is_null())
			return Poison(reason, "body missing");
		if (!body->is_string())
			return Poison(reason, "body is not a string");
		m.body = body->get<std::string>();
		if (m.body.find('\0') != std::string::npos)
			return Poison(reason, "body contains a NUL character"); // Postgres text cannot store it
	}

	// Refused like a bad body rather than stored: send_message never writes such a sender, and every
	// client would be shown it.
	auto sender = j.find("sender");
	if (sender != j.end() && !sender->is_null()) {
		if (!sender->is_string())
			return Poison(reason, "sender is not a string");
		if (!IsUserId(sender->get<std::string>()))
			return Poison(reason, "sender is not 1 to 200 bytes without control characters");
		m.sender = sender->get<std::string>();
	}

	auto created = j.find("created_at");
	if (created != j.end() && created->is_string() && LooksLikeTimestamp(created->get<std::string>()))
		m.created_at = created->get<std::string>();
	if (change == Change::None)
		return m;

	if (!ReadUuid(j, "message_id", &m.target))
		return Poison(reason, "message_id is not a uuid string");
	auto version = j.find("version");
	if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() < 1 ||
	    version->get<int64_t>() > INT32_MAX)
		return Poison(reason, "version is not an integer from 1 to 2147483647");
	m.version = version->get<int64_t>();
	auto at = j.find(change == Change::Edited ? "edited_at" : "deleted_at");
	if (at != j.end() && at->is_string() && LooksLikeTimestamp(at->get<std::string>()))
		m.changed_at = at->get<std::string>();
	return m;
}

} // namespace

std::optional<ChatMessage>
ParseMessage(const std::string &name, const std::string &data, std::string *reason)
{
	nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
	if (j.is_discarded())
		return Poison(reason, "data is not valid JSON");
	if (!j.is_object())
		return Poison(reason, "data is not a JSON object");
	return FromJson(j, name == kEditedJob ? Change::Edited : name == kDeletedJob ? Change::Deleted
	                                                                             : Change::None,
	                reason);
}

std::optional<ChatMessage>
ParseMessage(const std::string &data, std::string *reason)
{
	return ParseMessage(std::string(), data, reason);
}

} // namespace chat_outboxd
