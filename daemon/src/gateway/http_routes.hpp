// daemon/src/gateway/http_routes.hpp - plain HTTP on the gateway's listeners: /socket.io/ goes to
// Engine.IO's polling transport, /healthz and /metrics to the Hub's figures, other GETs to the web
// client's files under --web-root; anything else is 404.
#pragma once

#include <libwebsockets.h>

#include "base/core/config.hpp"
#include "gateway/client/conn.hpp"
#include "gateway/http/http_io.hpp"

namespace chat_outboxd {

class EngineIo;
class Hub;

class HttpRoutes {
  public:
	HttpRoutes(Hub &hub, EngineIo &engine, const HttpWriter &http, const Config &cfg);
	// A connection accepted on --metrics-listen carries kMetricsListener as its opaque user data (set
	// when it is handed to libwebsockets) and is served /metrics and /healthz only. (Not a vhost of its
	// own: libwebsockets moves a connection to the vhost its Host header names, or the first one.)
	static const char kMetricsListener;
	static bool OnMetricsListener(struct lws *wsi) { return lws_get_opaque_user_data(wsi) == &kMetricsListener; }

	int OnRequest(struct lws *wsi, Conn *c, const char *path);
	// OnWriteable writes the response Respond stored, or completes a held polling GET.
	int OnWriteable(struct lws *wsi, Conn *c);

  private:
	Hub &hub_;
	EngineIo &engine_;
	const HttpWriter &http_;
	const Config &cfg_;
};

} // namespace chat_outboxd
