// daemon/src/gateway/auth/core/gateway_auth.hpp - who may see which chats: the token's `chats` claim, narrowed
// by an optional list the client asks for (auth.chats or ?chats=1,2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/core/config.hpp"
#include "gateway/auth/core/jwt.hpp"
#include "gateway/auth/core/member_chats.hpp"

namespace chat_outboxd {

struct AuthResult {
	bool ok = false;
	std::string message;          // on refusal: "unauthorized" or "forbidden"
	std::string reason;           // on refusal: what the client did wrong
	std::vector<int64_t> allowed; // the token's chats (sorted): what join/send may touch
	std::vector<int64_t> rooms;   // the chats to join now (sorted)
	int64_t expires_at = 0;       // the token's exp (unix seconds): the connection ends then
	std::string sub, name;        // the token's sub and name claims (empty when absent)
	// --authz membership: whether the token has a `chats` claim, which then narrows the membership
	// (allowed holds that claim until MemberRooms replaces it)
	bool has_chats = true;
	std::vector<int64_t> token_chats; // the claim, kept by MemberRooms when has_chats
	// --authz membership: the user has more chats than --max-member-chats, so the socket gets the
	// first of them only (it is told: the chats_cut event)
	bool chats_cut = false;
};

// Authorize verifies the token and picks the rooms. A requested chat outside the token refuses the
// whole connection ("forbidden") rather than silently dropping it, so a client bug shows at once.
// With --authz membership and no chats claim it picks nothing: the requested chats are checked
// against the membership by MemberRooms.
AuthResult Authorize(std::string_view token, const jwt::Policy &policy, int64_t now,
                     const std::optional<std::vector<int64_t>> &requested);

// MemberRooms finishes an Authorize of --authz membership once the sub's chats are known (the first
// --max-member-chats of them): allowed becomes those chats, narrowed by the token's `chats` claim
// when it has one, and the rooms are picked as Authorize picks them (a requested chat outside them
// refuses the connection; of a cut list, with a reason that says so).
void MemberRooms(AuthResult *r, const MemberChats &member_of, const std::optional<std::vector<int64_t>> &requested);

// TokenPolicy is what the settings ask of client tokens: --jwt-secret, --jwt-audience, --jwt-issuer.
// It views into cfg, which must outlive it.
jwt::Policy TokenPolicy(const Config &cfg);

// ParseChatList reads "1,2,3" (from ?chats=); false on anything but comma-separated integers.
bool ParseChatList(std::string_view text, std::vector<int64_t> *out);
// ChatListFromJson reads [1,2,3] (integers or digit strings) from auth.chats.
bool ChatListFromJson(const nlohmann::json &j, std::vector<int64_t> *out);

// BearerToken extracts the token from an "Authorization: Bearer <token>" value ("" if not bearer).
std::string BearerToken(std::string_view header);

} // namespace chat_outboxd
