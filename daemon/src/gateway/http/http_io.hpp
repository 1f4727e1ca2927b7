// daemon/src/gateway/http/http_io.hpp - reading an lws HTTP request (query, headers, peer) and writing a
// whole response in one go, with CORS headers for the origins in --cors-origins.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <libwebsockets.h>

#include "gateway/client/conn.hpp"

namespace chat_outboxd {

struct QueryArgs {
	std::vector<std::pair<std::string, std::string>> items;
	std::string Get(std::string_view key) const;
	bool Has(std::string_view key) const;
};

QueryArgs ReadQuery(struct lws *wsi);
// HeadTooLarge: the path, the query or a known header's value reached http::kMaxFieldBytes (where
// libwebsockets cut it): the request is answered 431 (docs/client-protocol.md, "HTTP limits").
bool HeadTooLarge(struct lws *wsi);
// PathCut: libwebsockets' decoding of the path lost part of it (a percent-encoded NUL, CR or LF):
// the path the callback got is not the one the client sent, so it is answered 404.
bool PathCut(struct lws *wsi);
std::string Header(struct lws *wsi, enum lws_token_indexes token);
std::string PeerAddress(struct lws *wsi);
// Respond stores the response in c and asks for HTTP_WRITEABLE, where HttpWriter::Write sends it.
void Respond(struct lws *wsi, Conn *c, int status, const char *content_type, std::string body);

class HttpWriter {
  public:
	// cors_origins is --cors-origins: exact origins, comma-separated ("*" = any).
	explicit HttpWriter(const std::string &cors_origins);
	// Write sends headers and body at once. cors: a /socket.io/ response, which carries CORS headers
	// for an origin in --cors-origins. close: say `Connection: close` and return -1 so lws closes the
	// connection once the response has left, instead of reading the next request (or this one's body).
	int Write(struct lws *wsi, int status, const char *content_type, std::string_view body, bool cors,
	          bool close = false) const;

  private:
	std::vector<std::string> cors_origins_;
};

} // namespace chat_outboxd
