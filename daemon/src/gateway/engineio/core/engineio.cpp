// daemon/src/gateway/engineio/core/engineio.cpp - see engineio.hpp.
#include "gateway/engineio/core/engineio.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include <openssl/rand.h>

namespace chat_outboxd::eio {

namespace {
constexpr char kRecordSeparator = '\x1e';
} // namespace

bool
DecodePacket(std::string_view text, Packet *out)
{
	if (text.empty() || text[0] < '0' || text[0] > '6')
		return false;
	out->type = static_cast<PacketType>(text[0]);
	out->data = text.substr(1);
	return true;
}

bool
SplitPayload(std::string_view body, std::vector<std::string_view> *records, size_t max_packets)
{
	records->clear();
	size_t start = 0;
	for (;;) {
		size_t end = body.find(kRecordSeparator, start);
		std::string_view rec = body.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
		if (rec.empty() || records->size() >= max_packets)
			return false;
		records->push_back(rec);
		if (end == std::string_view::npos)
			return true;
		start = end + 1;
	}
}

void
AppendRecord(std::string *body, std::string_view packet)
{
	if (!body->empty())
		body->push_back(kRecordSeparator);
	body->append(packet);
}

std::string
OpenPacket(const std::string &sid, bool offer_websocket, int64_t ping_interval_ms, int64_t ping_timeout_ms,
           int64_t max_payload)
{
	// sid comes from RandomId (URL-safe alphabet), so it needs no JSON escaping.
	std::string s = "0{\"sid\":\"" + sid + "\",\"upgrades\":[";
	if (offer_websocket)
		s += "\"websocket\"";
	s += "],\"pingInterval\":" + std::to_string(ping_interval_ms) +
	     ",\"pingTimeout\":" + std::to_string(ping_timeout_ms) + ",\"maxPayload\":" + std::to_string(max_payload) +
	     "}";
	return s;
}

bool
ValidUtf8(std::string_view s)
{
	const auto *p = reinterpret_cast<const unsigned char *>(s.data());
	const unsigned char *end = p + s.size();
	while (p < end) {
		unsigned char c = *p;
		if (c < 0x80) {
			++p;
			continue;
		}
		size_t n;
		uint32_t cp;
		if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false; // continuation byte first, overlong lead (C0/C1) or F5..FF
		}
		if (static_cast<size_t>(end - p) <= n)
			return false;
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		p += n + 1;
	}
	return true;
}

std::string
ErrorBody(HttpError e)
{
	const char *msg = "Bad request";
	switch (e) {
	case HttpError::TransportUnknown:
		msg = "Transport unknown";
		break;
	case HttpError::SessionUnknown:
		msg = "Session ID unknown";
		break;
	case HttpError::BadHandshakeMethod:
		msg = "Bad handshake method";
		break;
	case HttpError::Forbidden:
		msg = "Forbidden";
		break;
	case HttpError::UnsupportedProtocol:
		msg = "Unsupported protocol version";
		break;
	case HttpError::TooManySessions:
		msg = "Too many unauthenticated sessions";
		e = HttpError::BadRequest;
		break;
	case HttpError::None:
	case HttpError::BadRequest:
		break;
	}
	return "{\"code\":" + std::to_string(static_cast<int>(e == HttpError::None ? HttpError::BadRequest : e)) +
	       ",\"message\":\"" + msg + "\"}";
}

Verdict
Classify(const Request &req)
{
	auto invalid = [](HttpError e) { return Verdict{RequestKind::Invalid, e}; };
	if (req.method == "OPTIONS" && !req.websocket)
		return {RequestKind::Preflight, HttpError::None};
	// The reference checks the transport before the protocol version.
	if (req.transport != "polling" && req.transport != "websocket")
		return invalid(HttpError::TransportUnknown);
	if (req.eio != "4")
		return invalid(HttpError::UnsupportedProtocol);
	if (req.websocket) {
		if (req.transport != "websocket")
			return invalid(HttpError::BadRequest);
		return {req.sid.empty() ? RequestKind::WebSocketNew : RequestKind::WebSocketUpgrade, HttpError::None};
	}
	if (req.transport == "websocket")
		return invalid(HttpError::BadRequest); // a plain GET cannot be a WebSocket
	if (req.sid.empty()) {
		if (req.method != "GET")
			return invalid(HttpError::BadHandshakeMethod);
		return {RequestKind::Handshake, HttpError::None};
	}
	if (req.method == "GET")
		return {RequestKind::Poll, HttpError::None};
	if (req.method == "POST")
		return {RequestKind::Send, HttpError::None};
	return invalid(HttpError::BadRequest);
}

bool
DeclaredBodyTooLarge(std::string_view content_length, int64_t max_payload)
{
	while (!content_length.empty() && (content_length.front() == ' ' || content_length.front() == '\t'))
		content_length.remove_prefix(1);
	while (!content_length.empty() && (content_length.back() == ' ' || content_length.back() == '\t'))
		content_length.remove_suffix(1);
	if (content_length.empty())
		return false;
	uint64_t n = 0;
	for (char ch : content_length) {
		if (ch < '0' || ch > '9')
			return false;
		// Saturate: twenty digits of declared length are as too large as the limit plus one.
		n = n > UINT64_MAX / 10 - 1 ? UINT64_MAX : n * 10 + static_cast<uint64_t>(ch - '0');
	}
	return max_payload < 0 || n > static_cast<uint64_t>(max_payload);
}

std::string
CorsAllowHeaders(std::string_view requested)
{
	// RFC 9110 token characters plus list separators; this also keeps the echo free of CR/LF.
	constexpr size_t kMaxLen = 1024;
	if (requested.size() > kMaxLen)
		return "";
	bool any_name = false;
	for (char ch : requested) {
		auto c = static_cast<unsigned char>(ch);
		if (std::isalnum(c) || (c != 0 && std::strchr("!#$%&'*+.^_`|~-", c))) {
			any_name = true;
			continue;
		}
		if (c == ',' || c == ' ' || c == '\t')
			continue;
		return "";
	}
	return any_name ? std::string(requested) : "";
}

bool
CorsOriginAllowed(std::string_view origin, const std::vector<std::string> &allowed)
{
	for (const std::string &a : allowed)
		if (a == "*" || a == origin)
			return true;
	return false;
}

std::vector<std::string>
ParseCorsOrigins(std::string_view setting)
{
	std::vector<std::string> origins;
	size_t start = 0;
	while (start <= setting.size()) {
		size_t comma = setting.find(',', start);
		if (comma == std::string_view::npos)
			comma = setting.size();
		std::string_view o = setting.substr(start, comma - start);
		while (!o.empty() && o.front() == ' ')
			o.remove_prefix(1);
		while (!o.empty() && o.back() == ' ')
			o.remove_suffix(1);
		if (!o.empty())
			origins.emplace_back(o);
		start = comma + 1;
	}
	return origins;
}

ProbeStep
OnProbeText(Transport t, std::string_view text)
{
	if (text == "2probe" && t == Transport::Probing)
		return ProbeStep::Answer;
	if (text == "5" && t == Transport::Upgrading)
		return ProbeStep::Complete;
	return ProbeStep::Fault;
}

std::string
RandomId(size_t len)
{
	static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	std::string out(len, 'A');
	unsigned char buf[64];
	size_t done = 0;
	while (done < len) {
		size_t n = std::min(len - done, sizeof buf);
		if (RAND_bytes(buf, static_cast<int>(n)) != 1)
			abort(); // no entropy: ids would be guessable, so refuse to continue
		for (size_t i = 0; i < n; i++)
			out[done + i] = kAlphabet[buf[i] & 63];
		done += n;
	}
	return out;
}

} // namespace chat_outboxd::eio
