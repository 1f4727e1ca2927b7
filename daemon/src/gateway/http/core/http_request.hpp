// daemon/src/gateway/http/core/http_request.hpp - limits on a request's head, and whether its path reached us
// whole (docs/client-protocol.md, "HTTP limits"). Pure: gateway/http/http_io.cpp reads the values out of libwebsockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace chat_outboxd::http {

// The gateway reads each connection's request head itself before libwebsockets sees it
// (gateway/http/head_reader.hpp) and answers what libwebsockets would drop without a word: a head over kMaxHeadBytes,
// or with more than kMaxHeadFields header lines and query arguments together, is 431; a request target
// holding a percent-encoded NUL is 400.
constexpr size_t kMaxHeadBytes = 16384;
constexpr size_t kMaxHeadFields = 64;
// libwebsockets keeps a request's method, path, query and headers (decoded, each followed by a NUL; a
// header it does not know by name with its name and 8 bytes more) in one buffer per connection,
// max_http_header_data, and keeps one slot per header line and query argument (about 90). A head
// within the two bounds above stores at most kMaxHeadFields * 8 bytes more than it takes on the wire,
// so it always fits in this buffer and in those slots.
constexpr unsigned kHeaderBufferBytes = kMaxHeadBytes + 1024;
// The path, the query, and each known header's value must stay below this many bytes (after percent-
// decoding). libwebsockets is told to cut each one here (token_limits), so a longer one leaves the
// request whole but marked, and is answered 431 Request Header Fields Too Large.
constexpr unsigned kMaxFieldBytes = 8192;

inline bool
FieldTooLong(size_t stored_len)
{
	return stored_len >= kMaxFieldBytes;
}

// PathIntact: libwebsockets percent-decodes the path as it reads it; a decoded NUL after a '/' stays in
// its buffer while the length it reports does not count it, so "/%00" reads as "/". `stored` is its
// buffer from the path's first byte on, path_len the length it reports, and `next` the value it
// stored after the path: the first query argument when has_query, else the HTTP version. In a whole
// path that value follows one NUL (before a query, a NUL and one skipped byte).
bool PathIntact(std::string_view stored, size_t path_len, std::string_view next, bool has_query);

// HeadScan: what the bytes a connection has sent so far say about its request head.
enum class HeadScan : uint8_t {
	Incomplete, // the head has not ended yet and is within the bounds: read on
	Whole,      // the head ended (an empty line) within the bounds: hand the connection on
	TooLarge,   // over kMaxHeadBytes or kMaxHeadFields: 431
	BadTarget,  // the request target holds a percent-encoded NUL: 400
};

// ScanHead judges a connection's first bytes (the request line, header lines ended by CRLF or LF, then
// an empty line; bytes after it, a body, are not looked at). A verdict other than Incomplete is final.
HeadScan ScanHead(std::string_view bytes);

} // namespace chat_outboxd::http
