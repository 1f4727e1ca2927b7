// daemon/src/gateway/core/jwt.hpp - HS256 JSON Web Tokens: verification of client tokens (and signing,
// for tests and tooling). Claims used by the gateway: `chats` (array of integer chat ids, required)
// and `exp` (required), `nbf` (optional), `sub` (optional, read but not used: authorization is by `chats` alone).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outboxd::jwt {

struct Claims {
	std::vector<int64_t> chats; // sorted, unique
	int64_t exp = 0;
	std::string sub;
};

// Verify checks the header (alg HS256), the signature (constant-time), exp/nbf against `now`
// (seconds since the epoch) and the claims' types. On failure returns false and sets *reason to a
// short phrase meant for the client ("token expired", "bad signature", ...).
bool Verify(std::string_view token, std::string_view secret, int64_t now, Claims *claims, std::string *reason);

// Sign builds header.payload.signature for a JSON payload text.
std::string Sign(std::string_view payload_json, std::string_view secret);

std::string Base64UrlEncode(std::string_view in);
// Base64UrlDecode accepts unpadded base64url; false on a character outside the alphabet or a
// length that no encoding produces.
bool Base64UrlDecode(std::string_view in, std::string *out);

} // namespace chat_outboxd::jwt
