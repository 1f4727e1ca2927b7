// daemon/src/gateway/http_routes.cpp - see http_routes.hpp.
#include "gateway/http_routes.hpp"

#include "base/log.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/http/core/web_files.hpp"
#include "gateway/engineio/engine_io.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/http/web_root.hpp"

namespace chat_outboxd {

const char HttpRoutes::kMetricsListener = 0;

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

int
HttpRoutes::OnRequest(struct lws *wsi, Conn *c, const char *path_in)
{
	std::string path = path_in ? path_in : "";
	c->role = Conn::Role::Http;
	c->response_ready = false;
	c->cors = false;
	c->close_after = false;
	// Before any route: an oversized head or a path libwebsockets could not read whole is never
	// looked at further (docs/client-protocol.md, "HTTP limits"; docs/web-client.md, "Serving").
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
	bool metrics_only = OnMetricsListener(wsi);
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
