// daemon/src/gateway/core/http_request.hpp - limits on a request's head, and whether its path reached us
// whole (docs/gateway.md, "HTTP limits"). Pure: http_io.cpp reads the values out of libwebsockets.
#pragma once

#include <cstddef>
#include <string_view>

namespace chat_outboxd::http {

// libwebsockets keeps a request's method, path, query and headers (decoded, each followed by a NUL) in one
// buffer per connection, max_http_header_data. A request that does not fit is dropped by libwebsockets
// itself without an answer, so the buffer is kept well above kMaxFieldBytes: a long token (the usual
// way to get here) is answered 431 instead.
constexpr unsigned kHeaderBufferBytes = 12288;
// The path, the query, and each known header's value must stay below this many bytes (after percent-
// decoding). libwebsockets is told to cut each one here (token_limits), so a longer one leaves the
// request whole but marked, and is answered 431 Request Header Fields Too Large.
constexpr unsigned kMaxFieldBytes = 8192;

inline bool FieldTooLong(size_t stored_len) { return stored_len >= kMaxFieldBytes; }

// PathIntact: libwebsockets percent-decodes the path as it reads it; a decoded NUL after a '/' stays in
// its buffer while the length it reports does not count it, so "/%00" reads as "/". `stored` is its
// buffer from the path's first byte on, path_len the length it reports, and `next` the value it
// stored after the path: the first query argument when has_query, else the HTTP version. In a whole
// path that value follows one NUL (before a query, a NUL and one skipped byte).
bool PathIntact(std::string_view stored, size_t path_len, std::string_view next, bool has_query);

} // namespace chat_outboxd::http
