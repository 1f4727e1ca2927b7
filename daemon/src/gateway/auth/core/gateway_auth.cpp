// daemon/src/gateway/auth/core/gateway_auth.cpp - see gateway_auth.hpp.
#include "gateway/auth/core/gateway_auth.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "gateway/client/core/message_json.hpp"

namespace chat_outboxd {

namespace {
constexpr size_t kMaxRequestedChats = 10000;

void
SortUnique(std::vector<int64_t> *v)
{
	std::sort(v->begin(), v->end());
	v->erase(std::unique(v->begin(), v->end()), v->end());
}
// PickRooms: every allowed chat, or the requested ones when each is allowed; false (forbidden) else.
bool
PickRooms(AuthResult *r, const std::optional<std::vector<int64_t>> &requested, const char *refusal)
{
	if (!requested) {
		r->rooms = r->allowed;
		return true;
	}
	r->rooms = *requested;
	SortUnique(&r->rooms);
	for (int64_t c : r->rooms) {
		if (!std::binary_search(r->allowed.begin(), r->allowed.end(), c)) {
			r->message = "forbidden";
			r->reason = "chat " + std::to_string(c) + " " + refusal;
			r->rooms.clear();
			return false;
		}
	}
	return true;
}
} // namespace

jwt::Policy
TokenPolicy(const Config &cfg)
{
	return {cfg.jwt_secret, cfg.jwt_audience, cfg.jwt_issuer, cfg.authz == "membership"};
}

AuthResult
Authorize(std::string_view token, const jwt::Policy &policy, int64_t now,
          const std::optional<std::vector<int64_t>> &requested)
{
	AuthResult r;
	jwt::Claims claims;
	if (!jwt::Verify(token, policy, now, &claims, &r.reason)) {
		r.message = "unauthorized";
		return r;
	}
	r.allowed = claims.chats;
	r.has_chats = claims.has_chats;
	r.expires_at = claims.exp;
	r.sub = claims.sub;
	r.name = claims.name;
	if (policy.membership && !claims.has_chats) {
		r.ok = true; // the requested chats wait for the membership (MemberRooms)
		return r;
	}
	r.ok = PickRooms(&r, requested, "is not in the token");
	return r;
}

void
MemberRooms(AuthResult *r, const MemberChats &member_of, const std::optional<std::vector<int64_t>> &requested)
{
	const std::vector<int64_t> &chats = member_of.chats;
	std::vector<int64_t> allowed;
	if (r->has_chats)
		r->token_chats = r->allowed;
	if (r->has_chats)
		std::set_intersection(chats.begin(), chats.end(), r->allowed.begin(), r->allowed.end(),
		                      std::back_inserter(allowed));
	else
		allowed = chats;
	r->allowed = std::move(allowed);
	r->chats_cut = member_of.Cut();
	// of a cut list, only the database knows whether a requested chat past it is the user's: the
	// client is told to join it once connected, where it is checked
	const std::string refusal = member_of.Cut() ? "is not among the first " + std::to_string(chats.size()) +
	                                                  " chats of this user (--max-member-chats): join it once connected"
	                                            : "is not a chat of this user";
	r->ok = PickRooms(r, requested, refusal.c_str());
}

bool
ParseChatList(std::string_view text, std::vector<int64_t> *out)
{
	out->clear();
	if (text.empty())
		return true;
	size_t start = 0;
	for (;;) {
		size_t comma = text.find(',', start);
		std::string_view part = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
		int64_t v = 0;
		if (!JsonInteger(std::string(part), &v) || out->size() >= kMaxRequestedChats)
			return false;
		out->push_back(v);
		if (comma == std::string_view::npos)
			return true;
		start = comma + 1;
	}
}

bool
ChatListFromJson(const nlohmann::json &j, std::vector<int64_t> *out)
{
	out->clear();
	if (!j.is_array() || j.size() > kMaxRequestedChats)
		return false;
	for (const auto &e : j) {
		int64_t v = 0;
		if (!JsonInteger(e, &v))
			return false;
		out->push_back(v);
	}
	return true;
}

std::string
BearerToken(std::string_view header)
{
	constexpr std::string_view kScheme = "bearer ";
	if (header.size() <= kScheme.size())
		return "";
	for (size_t i = 0; i < kScheme.size(); i++)
		if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i])
			return "";
	std::string_view rest = header.substr(kScheme.size());
	while (!rest.empty() && rest.front() == ' ')
		rest.remove_prefix(1);
	while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r'))
		rest.remove_suffix(1);
	return std::string(rest);
}

} // namespace chat_outboxd
