// daemon/src/gateway/gateway.cpp - the client gateway's lws context on the daemon's libuv loop, the
// callback trampoline that routes lws events to the HTTP / Engine.IO / plain-WS handlers, room
// membership, broadcast delivery and shutdown. See gateway_impl.hpp for the file map.
#include "gateway/gateway.hpp"

#include <algorithm>
#include <cstring>

#include "gateway/core/engineio.hpp"
#include "consumer/core/inbox_sql.hpp"
#include "gateway/core/message_json.hpp"
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

namespace {

void
LwsLog(int level, const char *line) noexcept
{
	std::string s(line);
	while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
		s.pop_back();
	Log(level & LLL_ERR ? Level::Warning : Level::Verbose, "lws: %s", s.c_str());
}

bool
SplitListen(const std::string &listen, std::string *host, int *port)
{
	size_t colon = listen.rfind(':');
	if (colon == std::string::npos)
		return false;
	*host = listen.substr(0, colon);
	if (host->size() >= 2 && host->front() == '[' && host->back() == ']')
		*host = host->substr(1, host->size() - 2);
	std::string p = listen.substr(colon + 1);
	if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos)
		return false;
	*port = std::stoi(p);
	return *port > 0 && *port < 65536;
}

} // namespace

// Callback is the single lws protocol callback: a noexcept trampoline. Any exception closes only
// the connection it happened on.
int
Gateway::Impl::Callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) noexcept
{
	auto *impl = static_cast<Impl *>(lws_context_user(lws_get_context(wsi)));
	if (!impl)
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	try {
		return impl->Dispatch(wsi, reason, static_cast<Conn **>(user), in, len);
	} catch (const std::exception &e) {
		Log(Level::Warning, "gateway: closing a connection after an internal error: %s", e.what());
	} catch (...) {
		Log(Level::Warning, "gateway: closing a connection after an unknown internal error");
	}
	return -1;
}

FrameRef
MakeFrame(std::string_view text)
{
	auto f = std::make_shared<Frame>();
	f->bytes.reserve(LWS_PRE + text.size());
	f->bytes.assign(LWS_PRE, '\0');
	f->bytes.append(text);
	return f;
}

FrameRef
OutQueue::Pop()
{
	FrameRef f = std::move(items_[head_++]);
	bytes_ -= f->Text().size();
	if (head_ == items_.size())
		Clear();
	return f;
}

void
OutQueue::Clear()
{
	items_.clear();
	items_.shrink_to_fit();
	head_ = 0;
	bytes_ = 0;
}

Gateway::Impl::Impl(uv_loop_t *l, const Config &c, PgClient &p, Metrics &m)
    : loop(l), cfg(c), pg(p), metrics(m), alive(std::make_shared<Impl *>(this)),
      ticker(std::make_unique<UvTimer>(l, "gateway deadlines"))
{
	std::string svc = QuoteIdent(cfg.service);
	// Functions and operators are schema-qualified: the connection's search_path decides nothing.
	// created_at as ISO 8601 (to_json), the same text the outbox payload carries.
	const std::string created = "pg_catalog.to_json(created_at) OPERATOR(pg_catalog.#>>) '{}'";
	// A page is at most $3 rows and stops at the row whose body crosses $4 bytes (always at least one
	// row), so one result never holds more than about --catchup-page-bytes. octet_length reads the
	// stored size without decompressing; only the rows returned are detoasted. `n` (rows under the
	// row limit) tells the caller whether the byte limit cut the page short.
	sql_catchup = "SELECT seq, message_id, chat_id, body, " + created + ", n FROM (SELECT *, pg_catalog.sum(len) OVER "
	              "(ORDER BY seq ROWS UNBOUNDED PRECEDING) OPERATOR(pg_catalog.-) len AS before, pg_catalog.count(*) "
	              "OVER () AS n FROM (SELECT seq, message_id, chat_id, body, created_at, "
	              "pg_catalog.octet_length(body)::bigint AS len FROM " + svc +
	              ".inbox WHERE chat_id OPERATOR(pg_catalog.=) ANY ($1::bigint[]) AND seq OPERATOR(pg_catalog.>) "
	              "$2::bigint ORDER BY seq LIMIT $3::bigint) page) sized WHERE before OPERATOR(pg_catalog.<) $4::bigint "
	              "ORDER BY seq";
	sql_send = "SELECT id, chat_id, body, " + created + " FROM " + svc + ".send_message($1::bigint, $2::text)";
	sql_high_seq = "SELECT COALESCE(pg_catalog.max(seq), 0) FROM " + svc + ".inbox";
	// --cors-origins: exact origins, comma-separated.
	size_t start = 0;
	while (start <= cfg.cors_origins.size()) {
		size_t comma = cfg.cors_origins.find(',', start);
		if (comma == std::string::npos)
			comma = cfg.cors_origins.size();
		std::string o = cfg.cors_origins.substr(start, comma - start);
		while (!o.empty() && o.front() == ' ')
			o.erase(o.begin());
		while (!o.empty() && o.back() == ' ')
			o.pop_back();
		if (!o.empty())
			cors_origins.push_back(o);
		start = comma + 1;
	}
}

int
Gateway::Impl::Dispatch(struct lws *wsi, enum lws_callback_reasons reason, Conn **slot, void *in, size_t len)
{
	Conn *c = slot ? *slot : nullptr;
	auto ensure = [&]() -> Conn * {
		if (!slot)
			return nullptr;
		if (!*slot)
			*slot = new Conn();
		return *slot;
	};
	switch (reason) {
	case LWS_CALLBACK_HTTP:
		c = ensure();
		return OnHttpRequest(wsi, c, static_cast<const char *>(in));
	case LWS_CALLBACK_HTTP_BODY:
		return c ? OnPollBody(wsi, c, in, len) : -1;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return c ? OnPollBodyDone(wsi, c) : -1;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? OnHttpWriteable(wsi, c) : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		if (c)
			OnHttpClosed(wsi, c);
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		if (shutting_down || (metrics_vhost && lws_get_vhost(wsi) == metrics_vhost))
			return 1;
		std::string uri = Header(wsi, WSI_TOKEN_GET_URI);
		if (uri == "/ws")
			return 0;
		if (uri != "/socket.io/" && uri != "/socket.io")
			return 1;
		QueryArgs q = ReadQuery(wsi);
		eio::Verdict v = eio::Classify({"GET", q.Get("EIO"), q.Get("transport"), q.Get("sid"), true});
		if (v.kind == eio::RequestKind::WebSocketNew) {
			std::string peer = PeerAddress(wsi);
			if (PendingFull(peer)) {
				RefuseSession(peer);
				return 1;
			}
			return 0;
		}
		if (v.kind != eio::RequestKind::WebSocketUpgrade)
			return 1;
		auto it = sessions.find(q.Get("sid"));
		// An upgrade is only for a live polling session with no probe under way.
		return it != sessions.end() && !it->second->closed && !it->second->websocket && !it->second->probe ? 0 : 1;
	}
	case LWS_CALLBACK_ESTABLISHED: {
		c = ensure();
		std::string uri = Header(wsi, WSI_TOKEN_GET_URI);
		if (uri == "/ws")
			return OnPlainEstablished(wsi, c) ? 0 : -1;
		QueryArgs q = ReadQuery(wsi);
		std::string sid = q.Get("sid");
		if (sid.empty()) {
			auto s = NewSession(true, PeerAddress(wsi));
			if (!s)
				return -1;
			s->ws = wsi;
			s->query_token = q.Get("token");
			c->role = Conn::Role::SioWs;
			c->session = s;
			EnqueueText(*s, eio::OpenPacket(s->sid, false, cfg.ping_interval, cfg.ping_timeout, cfg.max_payload));
			StartHeartbeat(*s);
			return 0;
		}
		auto it = sessions.find(sid);
		if (it == sessions.end() || it->second->closed || it->second->websocket || it->second->probe)
			return -1;
		it->second->probe = wsi;
		c->role = Conn::Role::SioProbe;
		c->session = it->second;
		ScheduleIn(it->second->probe_timer, cfg.upgrade_timeout);
		return 0;
	}
	case LWS_CALLBACK_RECEIVE:
		return c ? OnWebSocketReceive(wsi, c, in, len) : -1;
	case LWS_CALLBACK_RECEIVE_PONG:
		if (c && c->role == Conn::Role::Plain && c->plain)
			c->plain->heard = true;
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c ? OnWebSocketWriteable(wsi, c) : 0;
	case LWS_CALLBACK_CLOSED:
		if (c)
			OnWebSocketClosed(wsi, c);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (c) {
			if (c->role == Conn::Role::SioWs || c->role == Conn::Role::SioProbe || c->role == Conn::Role::Plain)
				OnWebSocketClosed(wsi, c);
			else
				OnHttpClosed(wsi, c);
			delete c;
			*slot = nullptr;
		}
		return 0;
	default:
		return 0;
	}
}

void
Gateway::Impl::Admit(Client &c, const AuthResult &auth)
{
	c.allowed = auth.allowed;
	for (int64_t r : auth.rooms)
		Join(c, r);
	// A token is a grant until its exp, not for as long as the connection lasts.
	int64_t left_s = std::max<int64_t>(0, auth.expires_at - static_cast<int64_t>(std::time(nullptr)));
	ScheduleIn(c.expiry, left_s * 1000);
	SetAuthed(c, true);
}

bool
Gateway::Impl::Allowed(const Client &c, int64_t chat) const
{
	return std::binary_search(c.allowed.begin(), c.allowed.end(), chat);
}

bool
Gateway::Impl::Join(Client &c, int64_t chat)
{
	if (!Allowed(c, chat))
		return false;
	auto it = std::lower_bound(c.joined.begin(), c.joined.end(), chat);
	if (it == c.joined.end() || *it != chat) {
		c.joined.insert(it, chat);
		rooms.Join(chat, &c);
	}
	return true;
}

void
Gateway::Impl::Leave(Client &c, int64_t chat)
{
	auto it = std::lower_bound(c.joined.begin(), c.joined.end(), chat);
	if (it != c.joined.end() && *it == chat) {
		c.joined.erase(it);
		rooms.Leave(chat, &c);
	}
}

void
Gateway::Impl::UpdateClientGauge()
{
	metrics.clients_connected = static_cast<int64_t>(client_count);
}

void
Gateway::Impl::DeliverBatch(const std::vector<InboxMessage> &messages)
{
	for (const InboxMessage &m : messages) {
		high_seq = std::max(high_seq, m.seq);
		const Rooms<Client>::Set *members = rooms.Members(m.chat_id);
		if (!members)
			continue;
		// Encode at most once per protocol, whatever the room size.
		FrameRef sio, plain;
		for (Client *c : *members) {
			FrameRef &f = c->kind == Client::Kind::SocketIo ? sio : plain;
			if (!f)
				f = MakeFrame(c->kind == Client::Kind::SocketIo ? SocketIoMessageEvent(m) : PlainMessageFrame(m));
			Offer(*c, m.seq, f);
		}
	}
}

void
Gateway::Impl::BeginShutdown(std::function<void()> done)
{
	on_shutdown_done = std::move(done);
	if (shutting_down || !ctx) {
		shutting_down = true;
		FinishShutdown();
		return;
	}
	shutting_down = true;
	Log(Level::Notice, "gateway: closing %zu client connection(s)", sessions.size() + plains.size());
	std::vector<std::shared_ptr<Client>> all;
	for (auto &kv : sessions)
		all.push_back(kv.second);
	for (auto &kv : plains)
		all.push_back(kv.second);
	// A transport close (not a Socket.IO DISCONNECT) so clients reconnect, to another instance.
	for (auto &c : all)
		CloseClient(*c, LWS_CLOSE_STATUS_GOINGAWAY, "server shutting down");
	// Give the close frames a moment to leave before the context goes.
	uv_timer_init(loop, &shutdown_timer);
	shutdown_timer.data = this;
	uv_timer_start(
	    &shutdown_timer,
	    [](uv_timer_t *t) {
		    auto *self = static_cast<Impl *>(t->data);
		    uv_close(reinterpret_cast<uv_handle_t *>(t), [](uv_handle_t *h) {
			    auto *me = static_cast<Impl *>(h->data);
			    try {
				    me->FinishShutdown();
			    } catch (...) {
				    Log(Level::Warning, "gateway: error during shutdown");
			    }
		    });
		    (void)self;
	    },
	    200, 0);
}

void
Gateway::Impl::FinishShutdown()
{
	// The sessions go below without DropClient: forget their deadlines with them.
	timers = TimerHeap();
	ticker.reset(); // closes the libuv handle, so the loop can end
	ticker_due = -1;
	if (ctx) {
		// First of two destroys (lws 4.1 on a foreign loop needs both, docs/gateway.md 'How it works'):
		// this one closes lws' handles on our loop; the second, in
		// ~Gateway after the loop has drained, frees the context.
		lws_context_destroy(ctx);
	}
	sessions.clear();
	plains.clear();
	if (on_shutdown_done) {
		auto done = std::move(on_shutdown_done);
		on_shutdown_done = nullptr;
		done();
	}
}

Gateway::Gateway(uv_loop_t *loop, const Config &cfg, PgClient &pg, Metrics &metrics)
    : impl_(std::make_unique<Impl>(loop, cfg, pg, metrics))
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
	std::string host;
	int port = 0;
	if (!SplitListen(impl_->cfg.listen, &host, &port)) {
		*error = "--listen must be host:port, got '" + impl_->cfg.listen + "'";
		return false;
	}
	lws_set_log_level(LLL_ERR | LLL_WARN | (LogEnabled(Level::Debug) ? LLL_NOTICE : 0), LwsLog);

	void *foreign_loops[1] = {impl_->loop};
	struct lws_context_creation_info info;
	std::memset(&info, 0, sizeof info);
	info.port = port;
	info.iface = host.empty() || host == "0.0.0.0" || host == "*" ? nullptr : host.c_str();
	// Both HTTP and every WebSocket (no subprotocol) land in one protocol; the path decides the role.
	static const struct lws_protocols protocols[] = {
	    // tx_packet_size: one send() per frame up to 64 KiB (a catch-up page holds big frames);
	    // by default lws sends rx_buffer_size bytes per call and buffers the rest.
	    {"chat-outbox-gateway", Impl::Callback, sizeof(Conn *), 2048, 0, nullptr, 65536},
	    {nullptr, nullptr, 0, 0, 0, nullptr, 0},
	};
	info.protocols = protocols;
	// No lws "validity" pings: lws keeps one per connection in a sorted list, re-sorted on every
	// connect (O(n) each). Engine.IO has its own heartbeat, /ws its keepalive (OnKeepalive).
	static const lws_retry_bo_t no_validity_checks = {};
	info.retry_and_idle_policy = &no_validity_checks;
	info.options = LWS_SERVER_OPTION_LIBUV;
	info.foreign_loops = foreign_loops;
	info.user = impl_.get();
	info.max_http_header_data = 8192; // a JWT may travel in ?token=
	info.timeout_secs = 20;
	info.keepalive_timeout = 60; // polling clients come back within a ping interval
	info.vhost_name = "chat-outbox-gateway";
	// --metrics-listen host:port: a second vhost on the same context (and loop) for /metrics.
	std::string metrics_host;
	int metrics_port = 0;
	const std::string &ml = impl_->cfg.metrics_listen;
	bool own_metrics = !ml.empty() && ml != "off";
	if (own_metrics && !SplitListen(ml, &metrics_host, &metrics_port)) {
		*error = "--metrics-listen must be empty, off or host:port, got '" + ml + "'";
		return false;
	}
	info.options |= LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	impl_->ctx = lws_create_context(&info);
	struct lws_vhost *main_vhost = impl_->ctx ? lws_create_vhost(impl_->ctx, &info) : nullptr;
	if (!main_vhost) {
		*error = "cannot listen on " + impl_->cfg.listen +
		         " (address in use, or the libwebsockets-evlib-uv plugin is missing)";
		return false;
	}
	if (own_metrics) {
		struct lws_context_creation_info minfo = info;
		minfo.port = metrics_port;
		minfo.iface = metrics_host.empty() || metrics_host == "0.0.0.0" || metrics_host == "*" ? nullptr
		                                                                                      : metrics_host.c_str();
		minfo.vhost_name = "chat-outbox-metrics";
		impl_->metrics_vhost = lws_create_vhost(impl_->ctx, &minfo);
		if (!impl_->metrics_vhost) {
			*error = "cannot listen on --metrics-listen " + ml;
			return false;
		}
		Log(Level::Notice, "gateway: /metrics and /healthz on %s", ml.c_str());
	}
	Log(Level::Notice, "gateway: listening on %s (Socket.IO /socket.io/, WebSocket /ws, /healthz, /metrics)",
	    impl_->cfg.listen.c_str());
	impl_->LoadHighSeq();
	return true;
}

void
Gateway::Deliver(const std::vector<InboxMessage> &messages)
{
	try {
		impl_->DeliverBatch(messages);
	} catch (const std::exception &e) {
		Log(Level::Warning, "gateway: delivery failed: %s", e.what());
	}
}

void
Gateway::Shutdown(std::function<void()> done)
{
	impl_->BeginShutdown(std::move(done));
}

size_t
Gateway::ClientCount() const
{
	return impl_->client_count;
}

} // namespace chat_outboxd
