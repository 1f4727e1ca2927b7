// daemon/src/gateway/engineio/core/engineio.hpp - the Engine.IO protocol 4 codec: packets, polling payloads, the
// handshake, HTTP error bodies, request classification and the upgrade's steps (docs/protocols/socketio.md).
//
// Pure functions over text; the gateway's I/O layer owns sessions and transports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outboxd::eio {

enum class PacketType : char {
	Open = '0',
	Close = '1',
	Ping = '2',
	Pong = '3',
	Message = '4',
	Upgrade = '5',
	Noop = '6',
};

struct Packet {
	PacketType type = PacketType::Noop;
	std::string_view data; // points into the decoded text
};

// DecodePacket reads one text packet ("4..." etc.). False for an empty packet, an unknown type
// digit, or a binary ("b...") packet: this gateway never accepts binary.
bool DecodePacket(std::string_view text, Packet *out);

// SplitPayload splits a polling body on the 0x1E record separator. False when a record is empty
// (which also rejects an empty body) or when there are more than max_packets records.
bool SplitPayload(std::string_view body, std::vector<std::string_view> *records, size_t max_packets = 1000);

// AppendRecord adds one packet to a polling body under construction.
void AppendRecord(std::string *body, std::string_view packet);

// OpenPacket is the handshake: `0{"sid":..,"upgrades":[..],"pingInterval":..,...}`.
std::string OpenPacket(const std::string &sid, bool offer_websocket, int64_t ping_interval_ms,
                       int64_t ping_timeout_ms, int64_t max_payload);

// ValidUtf8 is strict RFC 3629 UTF-8: no overlongs, no surrogates, nothing above U+10FFFF.
bool ValidUtf8(std::string_view s);

// The HTTP-level error codes of the reference server (docs/protocols/socketio.md,
// 'Requests and HTTP errors').
enum class HttpError {
	None = -1,
	TransportUnknown = 0,
	SessionUnknown = 1,
	BadHandshakeMethod = 2,
	BadRequest = 3,
	Forbidden = 4,
	UnsupportedProtocol = 5,
	// Ours, sent with HTTP 429: --max-unauthenticated(-per-address) reached. Code 3 in the body,
	// the reference's "Bad request", so clients that read it need nothing new.
	TooManySessions = 100,
};

// ErrorBody is the JSON body for an HttpError, e.g. {"code":1,"message":"Session ID unknown"}.
std::string ErrorBody(HttpError e);

// DeclaredBodyTooLarge: a polling POST whose Content-Length header declares more than max_payload
// bytes is refused on the header alone, before its body is read (docs/protocols/socketio.md,
// 'Requests and HTTP errors'). A value that is not a plain decimal number is left to the HTTP layer.
bool DeclaredBodyTooLarge(std::string_view content_length, int64_t max_payload);

// What a request to the Engine.IO path asks for, before any session lookup.
enum class RequestKind { Handshake,
	                     Poll,
	                     Send,
	                     WebSocketNew,
	                     WebSocketUpgrade,
	                     Preflight,
	                     Invalid };

struct Request {
	std::string method;     // "GET", "POST", "OPTIONS", ...
	std::string eio;        // EIO query value ("" if absent)
	std::string transport;  // transport query value
	std::string sid;        // sid query value ("" if absent)
	bool websocket = false; // the request asks for a WebSocket upgrade
};

struct Verdict {
	RequestKind kind = RequestKind::Invalid;
	HttpError error = HttpError::None;
};

// Classify applies the protocol's request rules (EIO version, transport, method, sid).
Verdict Classify(const Request &req);

// CORS preflight answers (docs/protocols/socketio.md, 'CORS'): the methods polling uses, and the
// request headers a browser asks to send, echoed back when they form a plain header-name list
// (anything else gets no allowance).
constexpr const char *kCorsAllowMethods = "GET, POST, OPTIONS";
std::string CorsAllowHeaders(std::string_view requested);
// CorsOriginAllowed: an Origin gets CORS headers only when --cors-origins lists it exactly, or
// lists "*".
bool CorsOriginAllowed(std::string_view origin, const std::vector<std::string> &allowed);
// ParseCorsOrigins splits --cors-origins: comma-separated, spaces around each trimmed, empty ones dropped.
std::vector<std::string> ParseCorsOrigins(std::string_view setting);

// Transport: what carries a session, and where an upgrade stands (docs/protocols/socketio.md, 'Upgrade').
//   Polling:   HTTP long-polling.
//   Probing:   a WebSocket (the probe) was opened for the upgrade; "2probe" has not come yet.
//   Upgrading: "2probe" was answered "3probe"; held GETs are released with a noop ("6") so the client
//              can send "5" on the probe.
//   WebSocket: one WebSocket carries everything, from the start or after "5"; polling is refused.
// A probe is accepted only in Polling; one that fails or times out goes back to Polling.
enum class Transport : uint8_t { Polling,
	                             Probing,
	                             Upgrading,
	                             WebSocket };

// ProbeStep is what a text frame on the probe WebSocket does: Answer ("2probe" while Probing: reply
// "3probe", now Upgrading), Complete ("5" while Upgrading: now WebSocket), or Fault (anything else).
enum class ProbeStep : uint8_t { Answer,
	                             Complete,
	                             Fault };
ProbeStep OnProbeText(Transport t, std::string_view text);

// RandomId returns `len` characters of URL-safe base64 alphabet from a CSPRNG.
std::string RandomId(size_t len);

} // namespace chat_outboxd::eio
