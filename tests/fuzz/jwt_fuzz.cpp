// tests/fuzz/jwt_fuzz.cpp - token verification on arbitrary input, and on arbitrary payloads that
// carry a valid signature (so the claim parsing is reached too, the aud/iss checks included).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/auth/core/jwt.hpp"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view in(reinterpret_cast<const char *>(data), size);
	chat_outboxd::jwt::Claims claims;
	std::string reason;
	const chat_outboxd::jwt::Policy policy{"fuzz-secret", "fuzz-audience", "fuzz-issuer"};
	(void)chat_outboxd::jwt::Verify(in, policy, 1700000000, &claims, &reason);
	std::string signed_token = chat_outboxd::jwt::Sign(in, policy.secret);
	(void)chat_outboxd::jwt::Verify(signed_token, policy, 1700000000, &claims, &reason);
	std::string decoded;
	(void)chat_outboxd::jwt::Base64UrlDecode(in, &decoded);
	return 0;
}
