// daemon/src/gateway/http_routes.cpp - plain HTTP on the gateway's port: request routing, response
// writing, /healthz, /metrics and the web client's files. Engine.IO polling itself is in http_polling.cpp.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/core/engineio.hpp"
#include "gateway/core/web_files.hpp"
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

namespace {

enum class WebFile { Ok, Missing, TooLarge };

// ReadWebFile reads <root>/<rel> when, with every symlink resolved, it is a regular file inside root
// of at most web::kMaxFileBytes. The files are small and local, so they are read on the loop.
WebFile
ReadWebFile(const std::string &root, const std::string &rel, std::string *body)
{
	char root_real[PATH_MAX], file_real[PATH_MAX];
	if (!realpath(root.c_str(), root_real) || !realpath((root + "/" + rel).c_str(), file_real))
		return WebFile::Missing;
	std::string inside = std::string(root_real) == "/" ? "/" : std::string(root_real) + "/";
	if (std::strncmp(file_real, inside.c_str(), inside.size()) != 0)
		return WebFile::Missing;
	int fd = open(file_real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return WebFile::Missing;
	struct stat st {};
	WebFile result = WebFile::Ok;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		result = WebFile::Missing;
	else if (static_cast<uint64_t>(st.st_size) > web::kMaxFileBytes)
		result = WebFile::TooLarge;
	body->clear();
	char buf[16384];
	while (result == WebFile::Ok) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			result = WebFile::Missing;
		if (n <= 0)
			break;
		body->append(buf, static_cast<size_t>(n));
		if (body->size() > web::kMaxFileBytes) // grew while we read it
			result = WebFile::TooLarge;
	}
	close(fd);
	return result;
}

} // namespace

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
Gateway::Impl::ReadQuery(struct lws *wsi)
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

std::string
Gateway::Impl::Header(struct lws *wsi, enum lws_token_indexes token)
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
Gateway::Impl::PeerAddress(struct lws *wsi)
{
	char buf[64] = {};
	const char *p = lws_get_peer_simple(wsi, buf, sizeof buf);
	return p ? std::string(p) : std::string();
}

int
Gateway::Impl::WriteHttp(struct lws *wsi, int status, const char *content_type, std::string_view body, bool cors)
{
	constexpr size_t kHeaderSpace = 4096; // room for an echoed origin and preflight header list
	std::string buf(LWS_PRE + kHeaderSpace + body.size(), '\0');
	auto *start = reinterpret_cast<unsigned char *>(&buf[LWS_PRE]);
	unsigned char *p = start, *end = start + kHeaderSpace;
	std::string len = std::to_string(body.size());
	// CORS only for /socket.io/ and only for an origin in --cors-origins; /metrics and /healthz never.
	std::string origin = cors ? Header(wsi, WSI_TOKEN_ORIGIN) : std::string();
	if (!origin.empty() && !eio::CorsOriginAllowed(origin, cors_origins))
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
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

void
Gateway::Impl::Respond(struct lws *wsi, Conn *c, int status, const char *content_type, std::string body)
{
	c->response_ready = true;
	c->status = status;
	c->content_type = content_type;
	c->body = std::move(body);
	lws_callback_on_writable(wsi);
}

int
Gateway::Impl::OnHttpWriteable(struct lws *wsi, Conn *c)
{
	if (c->role == Conn::Role::PollGet && !c->response_ready)
		return WritePollResponse(wsi, c);
	if (!c->response_ready)
		return 0;
	c->response_ready = false;
	std::string body = std::move(c->body);
	std::string type = std::move(c->content_type);
	c->role = Conn::Role::Http;
	c->rx.clear();
	c->rx_too_big = false;
	return WriteHttp(wsi, c->status, type.c_str(), body, c->cors);
}

std::string
Gateway::Impl::HealthJson(int *status) const
{
	bool up = metrics.redis_up && metrics.postgres_up && !shutting_down;
	*status = up ? 200 : 503;
	return std::string("{\"status\":\"") + (up ? "ok" : "unavailable") + "\",\"redis\":" +
	       (metrics.redis_up ? "true" : "false") + ",\"postgres\":" + (metrics.postgres_up ? "true" : "false") +
	       ",\"clients\":" + std::to_string(client_count) + ",\"redis_appendfsync\":" +
	       (metrics.redis_appendfsync.empty() ? "null" : "\"" + metrics.redis_appendfsync + "\"") + "}";
}

std::string
Gateway::Impl::MetricsText() const
{
	std::string s = metrics.RenderPrometheus();
	auto counter = [&s](const char *name, const char *help, uint64_t v) {
		s += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
		     std::to_string(v) + "\n";
	};
	auto gauge = [&s](const char *name, const char *help, uint64_t v) {
		s += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " +
		     std::to_string(v) + "\n";
	};
	counter("chat_outboxd_gateway_frames_pushed_total", "Message frames written to client sockets", frames_pushed);
	counter("chat_outboxd_gateway_catchups_total", "Catch-up replays run for reconnecting clients", catchup_runs);
	counter("chat_outboxd_gateway_catchup_messages_total", "Messages replayed by catch-up", catchup_messages);
	counter("chat_outboxd_gateway_sends_total", "Client sends stored by send_message", sends_ok);
	counter("chat_outboxd_gateway_send_errors_total", "Client sends refused or failed", sends_failed);
	counter("chat_outboxd_gateway_sends_rate_limited_total", "Client sends refused by --send-rate", sends_limited);
	counter("chat_outboxd_gateway_sessions_refused_total",
	        "Engine.IO handshakes refused by --max-unauthenticated(-per-address)", sessions_refused);
	counter("chat_outboxd_gateway_fell_behind_total",
	        "Times a client fell --client-queue-bytes behind and read on from the inbox", fell_behind);
	counter("chat_outboxd_gateway_clients_too_slow_total", "Clients closed for not reading their acks and pongs",
	        clients_too_slow);
	size_t buffered = 0, buffered_max = 0;
	auto add = [&](const Client &c) {
		buffered += c.Buffered();
		buffered_max = std::max(buffered_max, c.Buffered());
	};
	for (const auto &kv : sessions)
		add(*kv.second);
	for (const auto &kv : plains)
		add(*kv.second);
	gauge("chat_outboxd_gateway_buffered_bytes", "Bytes waiting for clients (queues and held live messages)", buffered);
	gauge("chat_outboxd_gateway_buffered_bytes_max", "Bytes waiting for the client that has the most", buffered_max);
	gauge("chat_outboxd_gateway_unauthenticated_sessions", "Engine.IO sessions without a namespace socket",
	      pending_total);
	gauge("chat_outboxd_gateway_queries_waiting", "Gateway queries waiting for Postgres (--query-queue)", queries_out);
	gauge("chat_outboxd_gateway_engine_sessions", "Open Engine.IO sessions", sessions.size());
	gauge("chat_outboxd_gateway_rooms", "Rooms with at least one member", rooms.RoomCount());
	return s;
}

int
Gateway::Impl::OnHttpRequest(struct lws *wsi, Conn *c, const char *path_in)
{
	std::string path = path_in ? path_in : "";
	c->role = Conn::Role::Http;
	c->response_ready = false;
	c->cors = false;
	bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	// --metrics-listen: its own listener serves /metrics and /healthz only; the public one no /metrics.
	bool metrics_only = metrics_vhost && lws_get_vhost(wsi) == metrics_vhost;
	bool metrics_here = cfg.metrics_listen.empty() || metrics_only;
	if (!metrics_only && (path == "/socket.io/" || path == "/socket.io")) {
		c->cors = true;
		if (shutting_down) {
			Respond(wsi, c, 503, "application/json", eio::ErrorBody(eio::HttpError::BadRequest));
			return 0;
		}
		return OnPolling(wsi, c, ReadQuery(wsi));
	}
	if (get && path == "/healthz") {
		int status = 200;
		std::string body = HealthJson(&status);
		Respond(wsi, c, status, "application/json", std::move(body));
		return 0;
	}
	if (get && path == "/metrics" && metrics_here) {
		Respond(wsi, c, 200, "text/plain; version=0.0.4", MetricsText());
		return 0;
	}
	// The web client (--web-root): GET only, a plain name inside the root, a type we know.
	std::string rel = web::RelativePath(path);
	const char *type = rel.empty() ? nullptr : web::ContentType(rel);
	if (get && type && !metrics_only && !cfg.web_root.empty()) {
		std::string body;
		switch (ReadWebFile(cfg.web_root, rel, &body)) {
		case WebFile::Ok:
			Respond(wsi, c, 200, type, std::move(body));
			return 0;
		case WebFile::TooLarge:
			Log(Level::Warning, "gateway: %s under --web-root is over %zu bytes; not served", rel.c_str(),
			    web::kMaxFileBytes);
			Respond(wsi, c, 500, "text/plain; charset=UTF-8", "file too large\n");
			return 0;
		case WebFile::Missing:
			break;
		}
	}
	Respond(wsi, c, 404, "text/plain; charset=UTF-8", "not found\n");
	return 0;
}

} // namespace chat_outboxd
