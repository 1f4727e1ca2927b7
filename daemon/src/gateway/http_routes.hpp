// daemon/src/gateway/http_routes.hpp - plain HTTP on the gateway's listeners: /socket.io/ goes to
// Engine.IO's polling transport, /healthz and /metrics to the Hub's figures, other GETs to the web
// client's files under --web-root; anything else is 404.
#pragma once

#include <libwebsockets.h>

#include "base/core/config.hpp"
#include "gateway/clients.hpp"
#include "gateway/http_io.hpp"

namespace chat_outboxd {

class EngineIo;
class Hub;

class HttpRoutes {
  public:
	HttpRoutes(Hub &hub, EngineIo &engine, const HttpWriter &http, const Config &cfg);
	// SetMetricsVhost: the --metrics-listen vhost, which serves /metrics and /healthz only.
	void SetMetricsVhost(struct lws_vhost *v) { metrics_vhost_ = v; }
	bool OnMetricsVhost(struct lws *wsi) const { return metrics_vhost_ && lws_get_vhost(wsi) == metrics_vhost_; }

	int OnRequest(struct lws *wsi, Conn *c, const char *path);
	// OnWriteable writes the response Respond stored, or completes a held polling GET.
	int OnWriteable(struct lws *wsi, Conn *c);

  private:
	Hub &hub_;
	EngineIo &engine_;
	const HttpWriter &http_;
	const Config &cfg_;
	struct lws_vhost *metrics_vhost_ = nullptr;
};

} // namespace chat_outboxd
