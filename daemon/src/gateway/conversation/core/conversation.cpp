// daemon/src/gateway/conversation/core/conversation.cpp - see conversation.hpp.
#include "gateway/conversation/core/conversation.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "gateway/client/core/message_json.hpp"
#include "inbox/core/user_id.hpp"
#include "inbox/core/uuid.hpp"

namespace chat_outboxd::conv {

namespace {

bool
Plain(std::string_view s, size_t max)
{
	return !s.empty() && s.size() <= max && s.find('\t') == std::string_view::npos &&
	       s.find('\0') == std::string_view::npos;
}

// A timestamp as to_json prints it: digits, '-', ':', '.', '+', 'T', at most 40 characters.
bool
IsTimestampText(std::string_view s)
{
	if (s.empty() || s.size() > 40)
		return false;
	return std::all_of(s.begin(), s.end(), [](char c) {
		return (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '.' || c == '+' || c == 'T';
	});
}

} // namespace

bool
UsableSub(std::string_view sub)
{
	return IsUserId(sub);
}

std::string
CleanName(std::string_view name)
{
	return Plain(name, kMaxNameBytes) ? std::string(name) : std::string();
}

nlohmann::json
UserJson(const User &u)
{
	return {{"service", u.service}, {"sub", u.sub}, {"name", u.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(u.name)}};
}

nlohmann::json
Error(std::string_view code, std::string message)
{
	return {{"ok", false}, {"error", {{"code", code}, {"message", std::move(message)}}}};
}

nlohmann::json
RateLimited(int64_t retry_after_ms)
{
	nlohmann::json e = Error("rate_limited", "too many requests of this kind; retry later");
	e["error"]["retry_after_ms"] = retry_after_ms;
	return e;
}

bool
ParseChatId(const nlohmann::json &arg, int64_t *chat, std::string *error)
{
	if (!arg.is_object()) {
		*error = "the argument must be an object";
		return false;
	}
	auto it = arg.find("chat_id");
	if (it == arg.end() || !JsonInteger(*it, chat)) {
		*error = "chat_id must be an integer";
		return false;
	}
	return true;
}

bool
ParseHistory(const nlohmann::json &arg, HistoryRequest *out, std::string *error)
{
	if (!ParseChatId(arg, &out->chat_id, error))
		return false;
	auto seq = arg.find("before_seq");
	if (seq != arg.end() && !seq->is_null()) {
		int64_t v = 0;
		if (!JsonInteger(*seq, &v) || v < 0) {
			*error = "before_seq must be a seq (an integer >= 0) or null";
			return false;
		}
		out->before_seq = v;
	}
	auto sent = arg.find("before_sent");
	if (sent != arg.end() && !sent->is_null()) {
		SentCursor c;
		if (!sent->is_string() || !DecodeSentCursor(sent->get_ref<const std::string &>(), &c)) {
			*error = "before_sent must be null or a next.before_sent this gateway gave";
			return false;
		}
		out->before_sent = std::move(c);
	}
	out->limit = kHistoryDefaultLimit;
	auto limit = arg.find("limit");
	if (limit != arg.end() && !limit->is_null()) {
		if (!limit->is_number_integer() || limit->get<int64_t>() < 1 || limit->get<int64_t>() > kHistoryMaxLimit) {
			*error = "limit must be an integer from 1 to " + std::to_string(kHistoryMaxLimit);
			return false;
		}
		out->limit = limit->get<int64_t>();
	}
	return true;
}

bool
ParseRead(const nlohmann::json &arg, int64_t *chat, int64_t *seq, std::string *error)
{
	if (!ParseChatId(arg, chat, error))
		return false;
	auto it = arg.find("seq");
	if (it == arg.end() || !JsonInteger(*it, seq) || *seq < 0) {
		*error = "seq must be a seq (an integer >= 0)";
		return false;
	}
	return true;
}

bool
ParseTyping(const nlohmann::json &arg, int64_t *chat, bool *typing, std::string *error)
{
	if (!ParseChatId(arg, chat, error))
		return false;
	*typing = true;
	auto it = arg.find("typing");
	if (it != arg.end() && !it->is_null()) {
		if (!it->is_boolean()) {
			*error = "typing must be true or false";
			return false;
		}
		*typing = it->get<bool>();
	}
	return true;
}

bool
ParsePresence(const nlohmann::json &arg, PresenceRequest *out, std::string *error)
{
	if (!ParseChatId(arg, &out->chat_id, error))
		return false;
	out->limit = kPresenceDefaultLimit;
	auto limit = arg.find("limit");
	if (limit != arg.end() && !limit->is_null() &&
	    (!JsonInteger(*limit, &out->limit) || out->limit < 1 || out->limit > kPresenceMaxLimit)) {
		*error = "limit must be an integer from 1 to " + std::to_string(kPresenceMaxLimit);
		return false;
	}
	auto after = arg.find("after");
	if (after != arg.end() && !after->is_null()) {
		if (!after->is_string() || after->get_ref<const std::string &>().size() > kPresenceAfterMaxBytes) {
			*error = "after must be the previous answer's next";
			return false;
		}
		out->after = after->get<std::string>();
	}
	return true;
}

std::string
EncodeSentCursor(const SentCursor &c)
{
	return c.created_at + "|" + c.id;
}

bool
DecodeSentCursor(std::string_view text, SentCursor *out)
{
	size_t bar = text.rfind('|');
	if (bar == std::string_view::npos)
		return false;
	std::string_view at = text.substr(0, bar), id = text.substr(bar + 1);
	if (!IsTimestampText(at) || !IsUuid(id))
		return false;
	out->created_at = std::string(at);
	out->id = std::string(id);
	return true;
}

std::string
PresenceMember(const User &u, std::string_view gateway, uint64_t client)
{
	return u.service + "\t" + u.sub + "\t" + std::string(gateway) + "\t" + std::to_string(client) + "\t" + u.name;
}

nlohmann::json
PresenceUsers(const std::vector<std::string> &members)
{
	std::set<std::tuple<std::string, std::string, std::string>> users; // service, sub, name
	std::set<std::pair<std::string, std::string>> seen;
	for (const std::string &m : members) {
		std::vector<std::string> f;
		size_t start = 0;
		for (size_t i = 0; i <= m.size(); i++) {
			if (i == m.size() || m[i] == '\t') {
				f.push_back(m.substr(start, i - start));
				start = i + 1;
			}
		}
		if (f.size() != 5 || f[0].empty() || f[1].empty())
			continue; // not a member a gateway wrote
		if (seen.insert({f[0], f[1]}).second)
			users.insert({f[0], f[1], f[4]});
	}
	nlohmann::json out = nlohmann::json::array();
	for (const auto &[service, sub, name] : users)
		out.push_back(UserJson({service, sub, name}));
	return out;
}

namespace {
constexpr const char *kEventNames[] = {"presence", "typing", "read", "shown", "sent"};
}

const char *
EventName(Event e)
{
	return kEventNames[static_cast<size_t>(e)];
}

std::optional<Event>
EventFromName(std::string_view name)
{
	for (size_t i = 0; i < std::size(kEventNames); i++)
		if (name == kEventNames[i])
			return static_cast<Event>(i);
	return std::nullopt;
}

std::string
Envelope(Event e, std::string_view service, const nlohmann::json &data)
{
	return DumpJson({{"event", EventName(e)}, {"service", service}, {"data", data}});
}

bool
ParseEnvelope(std::string_view text, BusEvent *out)
{
	nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
	if (!j.is_object())
		return false;
	auto ev = j.find("event"), svc = j.find("service"), data = j.find("data");
	if (ev == j.end() || !ev->is_string() || svc == j.end() || !svc->is_string() || data == j.end() ||
	    !data->is_object())
		return false;
	auto e = EventFromName(ev->get_ref<const std::string &>());
	if (!e)
		return false;
	out->event = *e;
	out->service = svc->get<std::string>();
	out->data = std::move(*data);
	return true;
}

bool
Forwarded(const BusEvent &e, std::string_view own)
{
	switch (e.event) {
	case Event::Sent:
		return e.service == own;
	case Event::Shown:
		return e.service != own;
	default:
		return true;
	}
}

} // namespace chat_outboxd::conv
