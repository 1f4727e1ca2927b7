// daemon/src/gateway/http_routes.cpp - see http_routes.hpp. The bodies of /healthz and /metrics are
// the Hub's (HealthJson, MetricsText), written here next to the routes that serve them.
#include "gateway/http_routes.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "gateway/core/engineio.hpp"
#include "gateway/core/web_files.hpp"
#include "gateway/eio_session.hpp"
#include "gateway/hub.hpp"
#include "gateway/query_queue.hpp"
#include "gateway/web_root.hpp"

namespace chat_outboxd {

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
	return http_.Write(wsi, c->status, type.c_str(), body, c->cors, c->close_after);
}

std::string
Hub::HealthJson(int *status) const
{
	bool servers = metrics.redis_up && metrics.postgres_up && !shutting_down;
	bool up = servers && Ready();
	*status = up ? 200 : 503;
	const char *state = up ? "ok" : servers ? "starting" : "unavailable";
	return std::string("{\"status\":\"") + state + "\",\"redis\":" +
	       (metrics.redis_up ? "true" : "false") + ",\"postgres\":" + (metrics.postgres_up ? "true" : "false") +
	       ",\"clients\":" + std::to_string(client_count) + ",\"redis_appendfsync\":" +
	       (metrics.redis_appendfsync.empty() ? "null" : "\"" + metrics.redis_appendfsync + "\"") +
	       ",\"partitions\":" + metrics.PartitionsJson() + "}";
}

std::string
Hub::MetricsText() const
{
	std::string s = metrics.RenderPrometheus();
	auto sample = [&s](const char *name, const char *help, const char *type, uint64_t v) {
		MetricHeader(&s, name, help, type);
		s += std::string(name) + " " + std::to_string(v) + "\n";
	};
	auto counter = [&sample](const char *name, const char *help, uint64_t v) { sample(name, help, "counter", v); };
	auto gauge = [&sample](const char *name, const char *help, uint64_t v) { sample(name, help, "gauge", v); };
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
	size_t buffered = 0, buffered_max = 0, engine_sessions = 0;
	for (const Endpoint *e : endpoints)
		e->ForEach([&](const Client &c) {
			buffered += c.Buffered();
			buffered_max = std::max(buffered_max, c.Buffered());
			engine_sessions += c.kind == Client::Kind::SocketIo;
		});
	gauge("chat_outboxd_gateway_buffered_bytes", "Bytes waiting for clients (queues and held live messages)", buffered);
	gauge("chat_outboxd_gateway_buffered_bytes_max", "Bytes waiting for the client that has the most", buffered_max);
	gauge("chat_outboxd_gateway_unauthenticated_sessions", "Engine.IO sessions without a namespace socket",
	      pending_total);
	gauge("chat_outboxd_gateway_queries_waiting", "Gateway queries waiting for Postgres (--query-queue)", queries.Waiting());
	gauge("chat_outboxd_gateway_engine_sessions", "Open Engine.IO sessions", engine_sessions);
	gauge("chat_outboxd_gateway_rooms", "Rooms with at least one member", rooms.RoomCount());
	conversation_counters.Render(&s);
	return s;
}

int
HttpRoutes::OnRequest(struct lws *wsi, Conn *c, const char *path_in)
{
	std::string path = path_in ? path_in : "";
	c->role = Conn::Role::Http;
	c->response_ready = false;
	c->cors = false;
	c->close_after = false;
	// Before any route: an oversized head or a path libwebsockets could not read whole is never
	// looked at further (docs/gateway.md, "HTTP limits"; docs/web-client.md, "Serving").
	if (HeadTooLarge(wsi)) {
		Respond(wsi, c, 431, "text/plain; charset=UTF-8", "request header fields too large\n");
		c->close_after = true;
		return 0;
	}
	if (PathCut(wsi)) {
		Respond(wsi, c, 404, "text/plain; charset=UTF-8", "not found\n");
		return 0;
	}
	bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	// --metrics-listen: its own listener serves /metrics and /healthz only; the public one no /metrics.
	bool metrics_only = OnMetricsVhost(wsi);
	bool metrics_here = cfg_.metrics_listen.empty() || metrics_only;
	if (!metrics_only && (path == "/socket.io/" || path == "/socket.io")) {
		c->cors = true;
		// Shutting down, or not yet ready to tell a client where to resume from (Hub::Ready): the
		// client retries with backoff, to this instance or another.
		if (hub_.ShuttingDown() || !hub_.Ready()) {
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
