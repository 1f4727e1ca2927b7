// daemon/src/gateway/http/http_io.cpp - see http_io.hpp.
#include "gateway/http/http_io.hpp"

#include <algorithm>
#include <cstring>

#include "gateway/engineio/core/engineio.hpp"
#include "gateway/http/core/http_request.hpp"

namespace chat_outboxd {

std::string
QueryArgs::Get(std::string_view key) const
{
	for (const auto &kv : items)
		if (kv.first == key)
			return kv.second;
	return "";
}

bool
QueryArgs::Has(std::string_view key) const
{
	for (const auto &kv : items)
		if (kv.first == key)
			return true;
	return false;
}

QueryArgs
ReadQuery(struct lws *wsi)
{
	// lws stores each argument urldecoded as its own fragment ("k=v").
	QueryArgs q;
	char buf[8192];
	for (int i = 0; i < 64; i++) {
		int n = lws_hdr_copy_fragment(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n < 0)
			break;
		std::string_view frag(buf, static_cast<size_t>(n));
		size_t eq = frag.find('=');
		if (eq == std::string_view::npos)
			q.items.emplace_back(std::string(frag), "");
		else
			q.items.emplace_back(std::string(frag.substr(0, eq)), std::string(frag.substr(eq + 1)));
	}
	return q;
}

bool
HeadTooLarge(struct lws *wsi)
{
	for (int t = 0; t < WSI_TOKEN_COUNT; t++)
		if (http::FieldTooLong(static_cast<size_t>(std::max(0, lws_hdr_total_length(wsi, static_cast<lws_token_indexes>(t))))))
			return true;
	return false;
}

bool
PathCut(struct lws *wsi)
{
	char *path = nullptr;
	int path_len = 0;
	if (lws_http_get_uri_and_method(wsi, &path, &path_len) < 0 || !path || path_len <= 0)
		return true;
	// A decoded CR or LF ended the request line where it stood: no HTTP version was read after it.
	std::string version = Header(wsi, WSI_TOKEN_HTTP);
	if (version.empty())
		return true;
	// What libwebsockets stored after the path: the first query argument (present, maybe empty, after
	// a '?'), else the version. A cut path shows as bytes between the two.
	char arg[8192];
	int n = lws_hdr_copy_fragment(wsi, arg, sizeof arg, WSI_TOKEN_HTTP_URI_ARGS, 0);
	bool has_query = n >= 0;
	std::string_view next = has_query ? std::string_view(arg, static_cast<size_t>(n)) : std::string_view(version);
	size_t len = static_cast<size_t>(path_len);
	// The path, the byte(s) after it and `next` all lie in libwebsockets' header buffer, in this order.
	return !http::PathIntact(std::string_view(path, len + (has_query ? 2 : 1) + next.size()), len, next, has_query);
}

std::string
Header(struct lws *wsi, enum lws_token_indexes token)
{
	int len = lws_hdr_total_length(wsi, token);
	if (len <= 0)
		return "";
	std::string s(static_cast<size_t>(len) + 1, '\0');
	if (lws_hdr_copy(wsi, &s[0], len + 1, token) < 0)
		return "";
	s.resize(static_cast<size_t>(len));
	return s;
}

std::string
PeerAddress(struct lws *wsi)
{
	char buf[64] = {};
	const char *p = lws_get_peer_simple(wsi, buf, sizeof buf);
	return p ? std::string(p) : std::string();
}

void
Respond(struct lws *wsi, Conn *c, int status, const char *content_type, std::string body)
{
	c->response_ready = true;
	c->status = status;
	c->content_type = content_type;
	c->body = std::move(body);
	lws_callback_on_writable(wsi);
}

HttpWriter::HttpWriter(const std::string &cors_origins) : cors_origins_(eio::ParseCorsOrigins(cors_origins)) {}

int
HttpWriter::Write(struct lws *wsi, int status, const char *content_type, std::string_view body, bool cors,
                  bool close) const
{
	constexpr size_t kHeaderSpace = 4096; // room for an echoed origin and preflight header list
	std::string buf(LWS_PRE + kHeaderSpace + body.size(), '\0');
	auto *start = reinterpret_cast<unsigned char *>(&buf[LWS_PRE]);
	unsigned char *p = start, *end = start + kHeaderSpace;
	std::string len = std::to_string(body.size());
	// CORS only for /socket.io/ and only for an origin in --cors-origins; /metrics and /healthz never.
	std::string origin = cors ? Header(wsi, WSI_TOKEN_ORIGIN) : std::string();
	if (!origin.empty() && !eio::CorsOriginAllowed(origin, cors_origins_))
		origin.clear();
	auto add = [&](enum lws_token_indexes t, const std::string &v) {
		return lws_add_http_header_by_token(wsi, t, reinterpret_cast<const unsigned char *>(v.data()),
		                                    static_cast<int>(v.size()), &p, end) == 0;
	};
	auto add_named = [&](const char *name, const std::string &v) {
		return lws_add_http_header_by_name(wsi, reinterpret_cast<const unsigned char *>(name),
		                                   reinterpret_cast<const unsigned char *>(v.data()),
		                                   static_cast<int>(v.size()), &p, end) == 0;
	};
	bool ok = lws_add_http_header_status(wsi, static_cast<unsigned>(status), &p, end) == 0 &&
	          add(WSI_TOKEN_HTTP_CONTENT_TYPE, content_type) && add(WSI_TOKEN_HTTP_CONTENT_LENGTH, len) &&
	          add(WSI_TOKEN_HTTP_CACHE_CONTROL, "no-store");
	if (ok && close)
		ok = add(WSI_TOKEN_CONNECTION, "close");
	// Browsers on another origin need CORS for polling; credentials require the exact origin, and
	// a response that echoes it varies with it.
	if (ok && !origin.empty())
		ok = add_named("access-control-allow-origin:", origin) &&
		     add_named("access-control-allow-credentials:", "true") && add_named("vary:", "Origin");
	// A preflight (OPTIONS with Access-Control-Request-*) must also name what the real request may use.
	if (ok && !origin.empty() && lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI) > 0) {
		ok = add_named("access-control-allow-methods:", eio::kCorsAllowMethods);
		std::string allow = eio::CorsAllowHeaders(Header(wsi, WSI_TOKEN_HTTP_AC_REQUEST_HEADERS));
		if (ok && !allow.empty())
			ok = add_named("access-control-allow-headers:", allow);
	}
	if (ok)
		ok = lws_finalize_http_header(wsi, &p, end) == 0;
	if (!ok)
		return -1;
	// Headers and body leave in one raw write: lws' HTTP_FINAL accounting is not needed here, we
	// sent Content-Length ourselves.
	std::memcpy(p, body.data(), body.size());
	size_t total = static_cast<size_t>(p - start) + body.size();
	if (lws_write(wsi, start, total, LWS_WRITE_HTTP_HEADERS) != static_cast<int>(total))
		return -1;
	// Closing: lws flushes what the kernel did not take yet before it closes.
	if (close)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

} // namespace chat_outboxd
