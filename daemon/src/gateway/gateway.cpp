// daemon/src/gateway/gateway.cpp - the gateway's composition: its parts (gateway.md, "How it works"),
// the lws context on the daemon's libuv loop, the table that routes each lws callback to the part
// that handles it, the WebSocket upgrade decision, and shutdown.
#include "gateway/gateway.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "base/c_boundary.hpp"
#include "base/log.hpp"
#include "base/uv_timer.hpp"
#include "bus/bus_subscriber.hpp"
#include "gateway/hub/catchup.hpp"
#include "gateway/send/client_sends.hpp"
#include "gateway/conversation/conversation.hpp"
#include "gateway/auth/membership.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/http/core/http_request.hpp"
#include "common/process/listen_address.hpp"
#include "common/process/listen_socket.hpp"
#include "gateway/engineio/engine_io.hpp"
#include "gateway/http/head_reader.hpp"
#include "gateway/http/http_io.hpp"
#include "gateway/http_routes.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/plain_ws/plain_ws.hpp"
#include "gateway/hub/query_queue.hpp"
#include "gateway/engineio/sio_namespace.hpp"

namespace chat_outboxd {

using chat_outbox::OpenListenSocket;
using chat_outbox::ParseListenAddress;

namespace {

void
LwsLog(int level, const char *line) noexcept
{
	CallFromC("lws", "the log callback", [&] {
		std::string s(line);
		while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
			s.pop_back();
		Log(level & LLL_ERR ? Level::Warning : Level::Verbose, "lws: %s", s.c_str());
	});
}

// HubSink hands the bus subscriber's rows to the Hub (the bus knows no gateway type).
class HubSink final : public BusSink {
  public:
	explicit HubSink(Hub &hub) : hub_(hub) {}
	void Deliver(const std::vector<InboxMessage> &messages) override { hub_.Deliver(messages); }
	void SeenSeq(int64_t seq) override { hub_.SeenSeq(seq); }

  private:
	Hub &hub_;
};

} // namespace

// Impl holds the parts, each owning its own state: the Hub (clients, rooms, delivery, deadlines,
// counters), the Postgres side (QueryQueue, Catchup, ClientSends), the two client protocols
// (SioNamespace on EngineIo, PlainWs) and the HTTP routes.
struct Gateway::Impl {
	Impl(uv_loop_t *loop, const Config &cfg, PgClient &pg, Metrics &metrics, BusMetrics &bus_metrics, RedisCommands &redis,
	     RedisSubscriber &pubsub);

	static int Callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) noexcept;
	int Dispatch(struct lws *wsi, enum lws_callback_reasons reason, Conn **slot, void *in, size_t len);
	// WebSocketAllowed is the upgrade decision for an HTTP request asking for a WebSocket.
	bool WebSocketAllowed(struct lws *wsi);

	// One handler per lws callback reason (kRoutes); c is the connection's Conn, null if it has none.
	int OnHttp(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnHttpBody(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnHttpBodyDone(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnHttpWriteable(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnHttpClosed(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnFilter(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnEstablished(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnReceive(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnPong(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnWriteable(struct lws *wsi, Conn *c, void *in, size_t len);
	int OnClosed(struct lws *wsi, Conn *c, void *in, size_t len);
	// OnConnGone: lws is done with the connection; c is freed after this.
	int OnConnGone(struct lws *wsi, Conn *c, void *in, size_t len);

	void BeginShutdown(std::function<void()> done);
	void FinishShutdown();

	using Handler = int (Impl::*)(struct lws *wsi, Conn *c, void *in, size_t len);
	// What a callback does with the connection's Conn (lws' per-connection user space).
	enum class ConnStep : uint8_t { Keep,
		                            Create,
		                            Free };
	struct Route {
		enum lws_callback_reasons reason;
		ConnStep conn;
		Handler handler;
	};
	static const Route kRoutes[];

	uv_loop_t *loop;
	const Config &cfg;
	struct lws_context *ctx = nullptr;
	QueryQueue queries;
	Hub hub;
	Catchup catchup;
	ClientSends sends;
	Conversation conv;
	std::unique_ptr<Membership> members; // --authz membership only
	HttpWriter http;
	SioNamespace sio;
	EngineIo engine;
	PlainWs plain;
	HttpRoutes routes;
	HubSink hub_sink;
	BusSubscriber bus;
	// The listeners (--listen, --metrics-listen): each reads a connection's request head, then hands
	// the connection to its libwebsockets vhost.
	HeadReader listener;
	HeadReader metrics_listener;
	RedisSubscriber &pubsub;
	bool bus_started = false;
	std::unique_ptr<UvTimer> shutdown_timer;
	std::function<void()> on_shutdown_done;
};

// What each lws callback reason means for the gateway; any other reason is ignored.
const Gateway::Impl::Route Gateway::Impl::kRoutes[] = {
    {LWS_CALLBACK_HTTP, ConnStep::Create, &Impl::OnHttp},
    {LWS_CALLBACK_HTTP_BODY, ConnStep::Keep, &Impl::OnHttpBody},
    {LWS_CALLBACK_HTTP_BODY_COMPLETION, ConnStep::Keep, &Impl::OnHttpBodyDone},
    {LWS_CALLBACK_HTTP_WRITEABLE, ConnStep::Keep, &Impl::OnHttpWriteable},
    {LWS_CALLBACK_CLOSED_HTTP, ConnStep::Keep, &Impl::OnHttpClosed},
    {LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION, ConnStep::Keep, &Impl::OnFilter},
    {LWS_CALLBACK_ESTABLISHED, ConnStep::Create, &Impl::OnEstablished},
    {LWS_CALLBACK_RECEIVE, ConnStep::Keep, &Impl::OnReceive},
    {LWS_CALLBACK_RECEIVE_PONG, ConnStep::Keep, &Impl::OnPong},
    {LWS_CALLBACK_SERVER_WRITEABLE, ConnStep::Keep, &Impl::OnWriteable},
    {LWS_CALLBACK_CLOSED, ConnStep::Keep, &Impl::OnClosed},
    {LWS_CALLBACK_WSI_DESTROY, ConnStep::Free, &Impl::OnConnGone},
    {LWS_CALLBACK_HTTP_DROP_PROTOCOL, ConnStep::Free, &Impl::OnConnGone},
};

namespace {

bool
IsWebSocket(const Conn &c)
{
	return c.role == Conn::Role::SioWs || c.role == Conn::Role::SioProbe || c.role == Conn::Role::Plain;
}

} // namespace

// Callback is the single lws protocol callback, through CallFromC: any exception closes only the
// connection it happened on (-1).
int
Gateway::Impl::Callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) noexcept
{
	auto *impl = static_cast<Impl *>(lws_context_user(lws_get_context(wsi)));
	if (!impl)
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	return CallFromC("gateway", "a connection's callback (the connection is closed)", -1,
	                 [&] { return impl->Dispatch(wsi, reason, static_cast<Conn **>(user), in, len); });
}

Gateway::Impl::Impl(uv_loop_t *l, const Config &c, PgClient &pg, Metrics &metrics, BusMetrics &bus_metrics,
                    RedisCommands &redis, RedisSubscriber &ps)
    : loop(l), cfg(c), queries(pg, c), hub(l, c, metrics, bus_metrics, queries), catchup(hub, queries, c),
      sends(hub, queries, c), conv(l, hub, queries, redis, ps, c), http(c.cors_origins),
      sio(hub, catchup, sends, conv, c), engine(hub, sio, http, c), plain(hub, catchup, sends, conv, c),
      routes(hub, engine, http, c), hub_sink(hub), bus(l, c, hub_sink, pg, queries.Schema(), metrics, bus_metrics), listener(l, "--listen"),
      metrics_listener(l, "--metrics-listen"), pubsub(ps)
{
	hub.SetCatchup(&catchup);
	if (c.authz == "membership") {
		members = std::make_unique<Membership>(hub, queries, pg, conv, static_cast<size_t>(c.max_member_chats));
		hub.SetMembership(members.get());
	}
	sends.OnSent([this](const nlohmann::json &message) { conv.Sent(message); });
	hub.AddEndpoint(engine);
	hub.AddEndpoint(plain);
}

int
Gateway::Impl::Dispatch(struct lws *wsi, enum lws_callback_reasons reason, Conn **slot, void *in, size_t len)
{
	for (const Route &r : kRoutes) {
		if (r.reason != reason)
			continue;
		if (r.conn == ConnStep::Create && slot && !*slot)
			*slot = new Conn();
		int rc = (this->*r.handler)(wsi, slot ? *slot : nullptr, in, len);
		if (r.conn == ConnStep::Free && slot && *slot) {
			delete *slot;
			*slot = nullptr;
		}
		return rc;
	}
	return 0;
}

int
Gateway::Impl::OnHttp(struct lws *wsi, Conn *c, void *in, size_t)
{
	return routes.OnRequest(wsi, c, static_cast<const char *>(in));
}

int
Gateway::Impl::OnHttpBody(struct lws *wsi, Conn *c, void *in, size_t len)
{
	return c ? engine.OnPollBody(wsi, c, in, len) : -1;
}

int
Gateway::Impl::OnHttpBodyDone(struct lws *wsi, Conn *c, void *, size_t)
{
	return c ? engine.OnPollBodyDone(wsi, c) : -1;
}

int
Gateway::Impl::OnHttpWriteable(struct lws *wsi, Conn *c, void *, size_t)
{
	return c ? routes.OnWriteable(wsi, c) : 0;
}

int
Gateway::Impl::OnHttpClosed(struct lws *wsi, Conn *c, void *, size_t)
{
	if (c)
		engine.OnHttpClosed(wsi, c);
	return 0;
}

int
Gateway::Impl::OnFilter(struct lws *wsi, Conn *, void *, size_t)
{
	// An upgrade gets the same answers as a plain request for an oversized head or a cut path; the
	// response is written here because refusing the upgrade closes the connection.
	const char *text = "text/plain; charset=UTF-8";
	if (HeadTooLarge(wsi)) {
		http.Write(wsi, 431, text, "request header fields too large\n", false, true);
		return 1;
	}
	if (PathCut(wsi)) {
		http.Write(wsi, 404, text, "not found\n", false, true);
		return 1;
	}
	return WebSocketAllowed(wsi) ? 0 : 1;
}

// WebSocketAllowed: /ws always; on /socket.io/ a new session within the unauthenticated-session caps,
// or the probe of a live polling session with no probe under way (docs/protocols/socketio.md,
// 'Upgrade'); no WebSocket on the --metrics-listen listener, during shutdown, or before the gateway is
// ready to tell a client where to resume from (Hub::Ready).
bool
Gateway::Impl::WebSocketAllowed(struct lws *wsi)
{
	if (hub.ShuttingDown() || !hub.Ready() || HttpRoutes::OnMetricsListener(wsi))
		return false;
	std::string uri = Header(wsi, WSI_TOKEN_GET_URI);
	if (uri == "/ws")
		return true;
	if (uri != "/socket.io/" && uri != "/socket.io")
		return false;
	QueryArgs q = ReadQuery(wsi);
	eio::Verdict v = eio::Classify({"GET", q.Get("EIO"), q.Get("transport"), q.Get("sid"), true});
	if (v.kind == eio::RequestKind::WebSocketNew)
		return engine.AdmitWebSocket(PeerAddress(wsi));
	return v.kind == eio::RequestKind::WebSocketUpgrade && engine.CanProbe(q.Get("sid"));
}

int
Gateway::Impl::OnEstablished(struct lws *wsi, Conn *c, void *, size_t)
{
	if (Header(wsi, WSI_TOKEN_GET_URI) == "/ws")
		return plain.OnEstablished(wsi, c) ? 0 : -1;
	return engine.OnWebSocketEstablished(wsi, c, ReadQuery(wsi), PeerAddress(wsi)) ? 0 : -1;
}

int
Gateway::Impl::OnReceive(struct lws *wsi, Conn *c, void *in, size_t len)
{
	if (!c)
		return -1;
	return c->role == Conn::Role::Plain ? plain.OnReceive(wsi, c, in, len) : engine.OnWebSocketReceive(wsi, c, in, len);
}

int
Gateway::Impl::OnPong(struct lws *, Conn *c, void *, size_t)
{
	if (c && c->role == Conn::Role::Plain)
		plain.OnPong(c);
	return 0;
}

int
Gateway::Impl::OnWriteable(struct lws *wsi, Conn *c, void *, size_t)
{
	if (!c)
		return 0;
	return c->role == Conn::Role::Plain ? plain.OnWriteable(wsi, c) : engine.OnWebSocketWriteable(wsi, c);
}

int
Gateway::Impl::OnClosed(struct lws *wsi, Conn *c, void *, size_t)
{
	if (!c)
		return 0;
	if (c->role == Conn::Role::Plain)
		plain.OnClosed(wsi, c);
	else
		engine.OnWebSocketClosed(wsi, c);
	return 0;
}

int
Gateway::Impl::OnConnGone(struct lws *wsi, Conn *c, void *in, size_t len)
{
	if (!c)
		return 0;
	if (IsWebSocket(*c))
		return OnClosed(wsi, c, in, len);
	engine.OnHttpClosed(wsi, c);
	return 0;
}

void
Gateway::Impl::BeginShutdown(std::function<void()> done)
{
	on_shutdown_done = std::move(done);
	// No new connection from here on; those still sending their heads are closed.
	listener.Close();
	metrics_listener.Close();
	if (hub.ShuttingDown() || !ctx) {
		hub.SetShuttingDown();
		FinishShutdown();
		return;
	}
	hub.SetShuttingDown();
	bus.Close(nullptr);
	std::vector<std::shared_ptr<Client>> all = hub.AllClients();
	Log(Level::Notice, "gateway: closing %zu client connection(s)", all.size());
	// A transport close (not a Socket.IO DISCONNECT) so clients reconnect, to another instance.
	for (auto &c : all)
		hub.Close(*c, LWS_CLOSE_STATUS_GOINGAWAY, "server shutting down");
	// Give the close frames a moment to leave before the context goes; FinishShutdown runs once the
	// timer's handle is closed.
	shutdown_timer = std::make_unique<UvTimer>(loop, "gateway shutdown");
	shutdown_timer->Start(200, [this] {
		shutdown_timer->Close([this] { FinishShutdown(); }); // a close callback: libuv's, through CallFromC
	});
}

void
Gateway::Impl::FinishShutdown()
{
	// The sessions go below without Endpoint::Drop: forget their deadlines with them (and close the
	// deadlines' libuv timer, so the loop can end).
	hub.DropDeadlines();
	conv.Stop();
	if (ctx) {
		// First of two destroys (lws 4.1 on a foreign loop needs both, docs/gateway.md 'How it works'):
		// this one closes lws' handles on our loop; the second, in
		// ~Gateway after the loop has drained, frees the context.
		lws_context_destroy(ctx);
	}
	hub.ForgetClients();
	if (on_shutdown_done) {
		auto done = std::move(on_shutdown_done);
		on_shutdown_done = nullptr;
		done();
	}
}

Gateway::Gateway(uv_loop_t *loop, const Config &cfg, PgClient &pg, Metrics &metrics, BusMetrics &bus_metrics,
                 RedisCommands &redis, RedisSubscriber &pubsub)
    : impl_(std::make_unique<Impl>(loop, cfg, pg, metrics, bus_metrics, redis, pubsub))
{
}

Gateway::~Gateway()
{
	if (impl_->ctx) {
		lws_context_destroy(impl_->ctx);
		impl_->ctx = nullptr;
	}
}

bool
Gateway::Start(std::string *error)
{
	// The daemon listens itself (HeadReader) and gives libwebsockets each connection whose request head
	// is in; libwebsockets' vhost listens on nothing.
	std::string host;
	int port = 0;
	if (!ParseListenAddress(impl_->cfg.listen, &host, &port)) {
		*error = "--listen must be host:port, got '" + impl_->cfg.listen + "'";
		return false;
	}
	int listen_fd = OpenListenSocket(impl_->cfg.listen, error, SOMAXCONN);
	if (listen_fd < 0) {
		*error = "--listen: " + *error;
		return false;
	}
	const std::string &ml = impl_->cfg.metrics_listen;
	bool own_metrics = !ml.empty() && ml != "off";
	int metrics_fd = -1;
	if (own_metrics) {
		if (!ParseListenAddress(ml, &host, &port)) {
			close(listen_fd);
			*error = "--metrics-listen must be empty, off or host:port, got '" + ml + "'";
			return false;
		}
		metrics_fd = OpenListenSocket(ml, error, SOMAXCONN);
		if (metrics_fd < 0) {
			close(listen_fd);
			*error = "--metrics-listen: " + *error;
			return false;
		}
	}
	lws_set_log_level(LLL_ERR | LLL_WARN | (LogEnabled(Level::Debug) ? LLL_NOTICE : 0), LwsLog);

	void *foreign_loops[1] = {impl_->loop};
	struct lws_context_creation_info info;
	std::memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	// Both HTTP and every WebSocket (no subprotocol) land in one protocol; the path decides the role.
	static const struct lws_protocols protocols[] = {
	    // tx_packet_size: one send() per frame up to 64 KiB (a catch-up page holds big frames);
	    // by default lws sends rx_buffer_size bytes per call and buffers the rest.
	    {"chat-outbox-gateway", Impl::Callback, sizeof(Conn *), 2048, 0, nullptr, 65536},
	    {nullptr, nullptr, 0, 0, 0, nullptr, 0},
	};
	info.protocols = protocols;
	// No lws "validity" pings: lws keeps one per connection in a sorted list, re-sorted on every
	// connect (O(n) each). Engine.IO has its own heartbeat, /ws its keepalive (PlainWs::OnKeepalive).
	static const lws_retry_bo_t no_validity_checks = {};
	info.retry_and_idle_policy = &no_validity_checks;
	info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.foreign_loops = foreign_loops;
	info.user = impl_.get();
	// A JWT may travel in ?token= or Authorization. libwebsockets cuts the path, the query and each
	// known header at kMaxFieldBytes (answered 431 by HeadTooLarge); its buffer holds any head the
	// HeadReader hands on (http::kHeaderBufferBytes).
	static const struct lws_token_limits field_limits = [] {
		struct lws_token_limits l {};
		for (auto &v : l.token_limit)
			v = http::kMaxFieldBytes;
		return l;
	}();
	info.token_limits = &field_limits;
	info.max_http_header_data = http::kHeaderBufferBytes;
	info.timeout_secs = 20;
	info.keepalive_timeout = 60; // polling clients come back within a ping interval
	info.vhost_name = "chat-outbox-gateway";
	impl_->ctx = lws_create_context(&info);
	struct lws_vhost *vhost = impl_->ctx ? lws_create_vhost(impl_->ctx, &info) : nullptr;
	if (!vhost) {
		close(listen_fd);
		if (metrics_fd >= 0)
			close(metrics_fd);
		*error = "libwebsockets cannot run on the daemon's libuv loop (is libwebsockets-evlib-uv installed?)";
		return false;
	}
	// Handed on: libwebsockets reads the connection from its first byte, as one it accepted itself; it
	// closes the socket itself when it cannot adopt it. tag: the connection's opaque user data.
	auto adopt = [vhost](const void *tag) {
		return [vhost, tag](int fd) {
			lws_adopt_desc_t desc = {};
			desc.vh = vhost;
			desc.type = static_cast<lws_adoption_type>(LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP);
			desc.fd.sockfd = fd;
			desc.opaque = const_cast<void *>(tag);
			if (!lws_adopt_descriptor_vhost_via_info(&desc))
				Log(Level::Verbose, "gateway: libwebsockets did not take a connection");
		};
	};
	if (!impl_->listener.Start(listen_fd, adopt(nullptr))) {
		close(listen_fd);
		if (metrics_fd >= 0)
			close(metrics_fd);
		*error = "--listen: libuv cannot watch the listening socket";
		return false;
	}
	if (own_metrics) {
		if (!impl_->metrics_listener.Start(metrics_fd, adopt(&HttpRoutes::kMetricsListener))) {
			close(metrics_fd);
			*error = "--metrics-listen: libuv cannot watch the listening socket";
			return false;
		}
		Log(Level::Notice, "gateway: /metrics and /healthz on %s", ml.c_str());
	}
	Log(Level::Notice, "gateway: listening on %s (Socket.IO /socket.io/, WebSocket /ws, /healthz, /metrics)",
	    impl_->cfg.listen.c_str());

	return true;
}

void
Gateway::Deliver(const std::vector<InboxMessage> &messages)
{
	// An exception goes back to the consumer's inbox stage, which logs it and goes on: the rows are
	// committed, catch-up serves them.
	impl_->queries.Schema().SawSenders(messages);
	if (impl_->bus_started)
		impl_->bus.Own(messages);
	else
		impl_->hub.Deliver(messages);
	impl_->conv.Delivered(messages);
}

void
Gateway::StartBus(const std::string &channel, bool redis_health)
{
	impl_->bus_started = true;
	impl_->bus.Start(impl_->pubsub, channel, redis_health);
}

void
Gateway::Shutdown(std::function<void()> done)
{
	impl_->BeginShutdown(std::move(done));
}

void
Gateway::SetOutboxStatus(const OutboxStatus *s)
{
	impl_->hub.SetOutboxStatus(s);
}

void
Gateway::PostgresUp()
{
	impl_->queries.Schema().Ready([] {});
	if (impl_->members)
		impl_->members->PostgresUp();
	impl_->bus.PostgresUp();
}

size_t
Gateway::ClientCount() const
{
	return impl_->hub.ClientCount();
}

} // namespace chat_outboxd
