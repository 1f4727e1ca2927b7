// daemon/src/gateway/auth/core/jwt.hpp - HS256 JSON Web Tokens: verification of client tokens (and signing,
// for tests and tooling). Claims used by the gateway: `chats` (array of integer chat ids, required)
// and `exp` (required), `nbf` (optional), `aud` and `iss` (checked only when the Policy names them),
// `sub` and `name` (optional: who the user is in presence, typing and read receipts; authorization is
// by `chats` alone).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outboxd::jwt {

struct Claims {
	std::vector<int64_t> chats; // sorted, unique
	bool has_chats = true;      // false: no `chats` claim (allowed only by Policy::chats_optional)
	int64_t exp = 0;
	std::string sub;  // the user (conversation events); empty when absent or not a string
	std::string name; // the user's name as shown to others; empty when absent or not a string
};

// Policy is what a token must satisfy besides its time window. The views must outlive the call.
struct Policy {
	std::string_view secret = {};   // HMAC key; its minimum length is a setting's rule (base/core/config.cpp)
	std::string_view audience = {}; // non-empty: `aud` (a string, or an array of strings) must contain it
	std::string_view issuer = {};   // non-empty: `iss` must be exactly this string
	// --authz membership: the chats come from the database, so a token needs no `chats` claim (one
	// it has still restricts); then it needs a `sub` (sub missing / bad sub), whose chats they are.
	bool membership = false;
};

// Verify checks the encoding (canonical base64url in every part), the header (alg HS256), the
// signature (constant-time), exp/nbf against `now` (seconds since the epoch), aud/iss when the policy
// names them, and the claims' types. On failure returns false and sets *reason to a short phrase
// meant for the client ("token expired", "bad signature", ...); it never contains the secret.
bool Verify(std::string_view token, const Policy &policy, int64_t now, Claims *claims, std::string *reason);

// Sign builds header.payload.signature for a JSON payload text.
std::string Sign(std::string_view payload_json, std::string_view secret);

std::string Base64UrlEncode(std::string_view in);
// Base64UrlDecode accepts only canonical unpadded base64url, the one text Base64UrlEncode makes for
// the bytes: false on padding or any character outside the alphabet, on a length that no encoding
// produces, and on non-zero unused bits in the last character. So a token has one spelling, and a
// signature cannot be altered without changing the bytes it decodes to.
bool Base64UrlDecode(std::string_view in, std::string *out);

} // namespace chat_outboxd::jwt
