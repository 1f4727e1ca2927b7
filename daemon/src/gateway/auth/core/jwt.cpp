// daemon/src/gateway/auth/core/jwt.cpp - see jwt.hpp.
#include "gateway/auth/core/jwt.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "inbox/core/user_id.hpp"

namespace chat_outboxd::jwt {

namespace {

constexpr size_t kMaxTokenLength = 8192; // far above any real token; bounds the work per attempt

std::string
HmacSha256(std::string_view key, std::string_view data)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char *>(data.data()),
	     data.size(), mac, &len);
	return std::string(reinterpret_cast<char *>(mac), len);
}

int
DecodeChar(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

bool
Fail(std::string *reason, const char *why)
{
	*reason = why;
	return false;
}

// IntegerClaim reads an integral JSON number (JWT NumericDate may carry a fraction: truncate it).
bool
IntegerClaim(const nlohmann::json &v, int64_t *out)
{
	if (v.is_number_integer()) {
		if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
			return false;
		*out = v.get<int64_t>();
		return true;
	}
	if (v.is_number_float()) {
		double d = v.get<double>();
		if (!(d > -9.2e18 && d < 9.2e18))
			return false;
		*out = static_cast<int64_t>(d);
		return true;
	}
	return false;
}

// AudienceRefusal: nullptr when `aud` (one string or an array of strings, RFC 7519 4.1.3) is or
// contains `want`, else the refusal's reason.
const char *
AudienceRefusal(const nlohmann::json &aud, std::string_view want)
{
	if (aud.is_string())
		return aud.get_ref<const std::string &>() == want ? nullptr : "wrong aud";
	if (!aud.is_array())
		return "bad aud";
	const char *refusal = "wrong aud";
	for (const auto &a : aud) {
		if (!a.is_string())
			return "bad aud";
		if (a.get_ref<const std::string &>() == want)
			refusal = nullptr;
	}
	return refusal;
}

} // namespace

std::string
Base64UrlEncode(std::string_view in)
{
	static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	std::string out;
	out.reserve((in.size() * 4 + 2) / 3);
	size_t i = 0;
	for (; i + 2 < in.size(); i += 3) {
		uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
		out += kAlphabet[v >> 18];
		out += kAlphabet[(v >> 12) & 63];
		out += kAlphabet[(v >> 6) & 63];
		out += kAlphabet[v & 63];
	}
	if (i + 1 == in.size()) {
		uint32_t v = uint8_t(in[i]) << 16;
		out += kAlphabet[v >> 18];
		out += kAlphabet[(v >> 12) & 63];
	} else if (i + 2 == in.size()) {
		uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
		out += kAlphabet[v >> 18];
		out += kAlphabet[(v >> 12) & 63];
		out += kAlphabet[(v >> 6) & 63];
	}
	return out;
}

bool
Base64UrlDecode(std::string_view in, std::string *out)
{
	if (in.size() % 4 == 1)
		return false;
	out->clear();
	out->reserve(in.size() * 3 / 4);
	uint32_t acc = 0;
	int bits = 0;
	for (char c : in) {
		int v = DecodeChar(c);
		if (v < 0)
			return false;
		acc = (acc << 6) | uint32_t(v);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out->push_back(char((acc >> bits) & 0xFF));
		}
	}
	// The last character's unused low bits (2 or 4) are zero in the canonical encoding.
	return (acc & ((1u << bits) - 1)) == 0;
}

std::string
Sign(std::string_view payload_json, std::string_view secret)
{
	std::string signing_input = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})") + "." + Base64UrlEncode(payload_json);
	return signing_input + "." + Base64UrlEncode(HmacSha256(secret, signing_input));
}

bool
Verify(std::string_view token, const Policy &policy, int64_t now, Claims *claims, std::string *reason)
{
	if (token.empty())
		return Fail(reason, "missing token");
	if (token.size() > kMaxTokenLength)
		return Fail(reason, "malformed token");
	size_t dot1 = token.find('.');
	size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
	if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos)
		return Fail(reason, "malformed token");

	std::string header_text, payload_text, signature;
	if (!Base64UrlDecode(token.substr(0, dot1), &header_text) ||
	    !Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1), &payload_text) ||
	    !Base64UrlDecode(token.substr(dot2 + 1), &signature))
		return Fail(reason, "malformed token");

	nlohmann::json header = nlohmann::json::parse(header_text, nullptr, false);
	if (!header.is_object())
		return Fail(reason, "malformed token");
	// Only HS256: accepting the header's choice ("none", RS256 with the secret as a key) is the
	// classic JWT forgery.
	auto alg = header.find("alg");
	if (alg == header.end() || !alg->is_string() || *alg != "HS256")
		return Fail(reason, "unsupported alg");

	std::string expected = HmacSha256(policy.secret, token.substr(0, dot2));
	if (signature.size() != expected.size() || CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) != 0)
		return Fail(reason, "bad signature");

	nlohmann::json payload = nlohmann::json::parse(payload_text, nullptr, false);
	if (!payload.is_object())
		return Fail(reason, "malformed token");

	auto exp = payload.find("exp");
	if (exp == payload.end())
		return Fail(reason, "exp missing");
	if (!IntegerClaim(*exp, &claims->exp))
		return Fail(reason, "bad exp");
	if (now >= claims->exp)
		return Fail(reason, "token expired");
	auto nbf = payload.find("nbf");
	if (nbf != payload.end()) {
		int64_t v = 0;
		if (!IntegerClaim(*nbf, &v))
			return Fail(reason, "bad nbf");
		if (now < v)
			return Fail(reason, "token not yet valid");
	}

	if (!policy.audience.empty()) {
		auto aud = payload.find("aud");
		if (aud == payload.end())
			return Fail(reason, "aud missing");
		if (const char *refusal = AudienceRefusal(*aud, policy.audience))
			return Fail(reason, refusal);
	}
	if (!policy.issuer.empty()) {
		auto iss = payload.find("iss");
		if (iss == payload.end())
			return Fail(reason, "iss missing");
		if (!iss->is_string())
			return Fail(reason, "bad iss");
		if (iss->get_ref<const std::string &>() != policy.issuer)
			return Fail(reason, "wrong iss");
	}

	// Absent and present-but-wrong are told apart: a backend that puts "1" or 1 in the claim has a
	// different bug from one that forgets it.
	auto chats = payload.find("chats");
	claims->chats.clear();
	claims->has_chats = chats != payload.end();
	if (!claims->has_chats && !policy.membership)
		return Fail(reason, "chats missing");
	if (claims->has_chats && !chats->is_array())
		return Fail(reason, "bad chats");
	for (const auto &c : claims->has_chats ? *chats : nlohmann::json::array()) {
		if (!c.is_number_integer() || (c.is_number_unsigned() && c.get<uint64_t>() > uint64_t(INT64_MAX)))
			return Fail(reason, "bad chats");
		claims->chats.push_back(c.get<int64_t>());
	}
	std::sort(claims->chats.begin(), claims->chats.end());
	claims->chats.erase(std::unique(claims->chats.begin(), claims->chats.end()), claims->chats.end());

	claims->sub.clear();
	auto sub = payload.find("sub");
	if (sub != payload.end() && sub->is_string())
		claims->sub = sub->get<std::string>();
	if (policy.membership && sub == payload.end())
		return Fail(reason, "sub missing");
	// the user id rule of chat_outbox.check_user_id: the sub is looked up in chat_outbox.members
	if (policy.membership && !chat_outboxd::IsUserId(claims->sub))
		return Fail(reason, "bad sub");
	claims->name.clear();
	auto name = payload.find("name");
	if (name != payload.end() && name->is_string())
		claims->name = name->get<std::string>();
	return true;
}

} // namespace chat_outboxd::jwt
