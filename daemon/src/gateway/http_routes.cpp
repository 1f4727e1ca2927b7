// daemon/src/gateway/http_routes.cpp - see http_routes.hpp. The bodies of /healthz and /metrics are
// the Hub's (HealthJson, MetricsText), written here next to the routes that serve them.
#include "gateway/http_routes.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.hpp"
#include "gateway/core/engineio.hpp"
#include "gateway/core/web_files.hpp"
#include "gateway/eio_session.hpp"
#include "gateway/hub.hpp"
#include "gateway/query_queue.hpp"

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

HttpRoutes::HttpRoutes(Hub &hub, EngineIo &engine, const HttpWriter &http, const Config &cfg)
    : hub_(hub), engine_(engine), http_(http), cfg_(cfg)
{
}

int
HttpRoutes::OnWriteable(struct lws *wsi, Conn *c)
{
	if (c->role == Conn::Role::PollGet && !c->response_ready)
		return engine_.WritePollResponse(wsi, c);
	if (!c->response_ready)
		return 0;
	c->response_ready = false;
	std::string body = std::move(c->body);
	std::string type = std::move(c->content_type);
	c->role = Conn::Role::Http;
	c->rx.clear();
	c->rx_too_big = false;
	return http_.Write(wsi, c->status, type.c_str(), body, c->cors);
}

std::string
Hub::HealthJson(int *status) const
{
	bool up = metrics.redis_up && metrics.postgres_up && !shutting_down;
	*status = up ? 200 : 503;
	return std::string("{\"status\":\"") + (up ? "ok" : "unavailable") + "\",\"redis\":" +
	       (metrics.redis_up ? "true" : "false") + ",\"postgres\":" + (metrics.postgres_up ? "true" : "false") +
	       ",\"clients\":" + std::to_string(client_count) + "}";
}

std::string
Hub::MetricsText() const
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
	gauge("chat_outboxd_gateway_queries_waiting", "Gateway queries waiting for Postgres (--query-queue)", queries.Waiting());
	gauge("chat_outboxd_gateway_engine_sessions", "Open Engine.IO sessions", sessions.size());
	gauge("chat_outboxd_gateway_rooms", "Rooms with at least one member", rooms.RoomCount());
	return s;
}

int
HttpRoutes::OnRequest(struct lws *wsi, Conn *c, const char *path_in)
{
	std::string path = path_in ? path_in : "";
	c->role = Conn::Role::Http;
	c->response_ready = false;
	c->cors = false;
	bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	// --metrics-listen: its own listener serves /metrics and /healthz only; the public one no /metrics.
	bool metrics_only = OnMetricsVhost(wsi);
	bool metrics_here = cfg_.metrics_listen.empty() || metrics_only;
	if (!metrics_only && (path == "/socket.io/" || path == "/socket.io")) {
		c->cors = true;
		if (hub_.ShuttingDown()) {
			Respond(wsi, c, 503, "application/json", eio::ErrorBody(eio::HttpError::BadRequest));
			return 0;
		}
		return engine_.OnPolling(wsi, c, ReadQuery(wsi));
	}
	if (get && path == "/healthz") {
		int status = 200;
		std::string body = hub_.HealthJson(&status);
		Respond(wsi, c, status, "application/json", std::move(body));
		return 0;
	}
	if (get && path == "/metrics" && metrics_here) {
		Respond(wsi, c, 200, "text/plain; version=0.0.4", hub_.MetricsText());
		return 0;
	}
	// The web client (--web-root): GET only, a plain name inside the root, a type we know.
	std::string rel = web::RelativePath(path);
	const char *type = rel.empty() ? nullptr : web::ContentType(rel);
	if (get && type && !metrics_only && !cfg_.web_root.empty()) {
		std::string body;
		switch (ReadWebFile(cfg_.web_root, rel, &body)) {
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
