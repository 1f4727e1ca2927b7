// daemon/src/gateway/gateway_impl.hpp - the gateway's internals, shared by the files that implement
// Gateway: gateway.cpp (lws context, callback dispatch, delivery, shutdown), http_routes.cpp
// (HTTP responses, /healthz, /metrics), http_polling.cpp (Engine.IO long-polling),
// eio_session.cpp (transport-independent Engine.IO sessions), sio_handler.cpp (Socket.IO packets),
// plain_ws.cpp (the /ws JSON endpoint), catchup.cpp and client_send.cpp (the Postgres side).
//
// Everything runs on the daemon's single libuv loop: no locks. Objects that a Postgres callback may
// outlive are shared_ptr-owned and the callbacks hold weak_ptrs.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <libwebsockets.h>
#include <nlohmann/json.hpp>

#include "gateway/core/gateway_auth.hpp"
#include "gateway/core/rate_limit.hpp"
#include "gateway/core/rooms.hpp"
#include "gateway/core/seq_gate.hpp"
#include "base/uv_timer.hpp"
#include "gateway/gateway.hpp"
#include "gateway/core/timer_heap.hpp"

namespace chat_outboxd {

// Frame is one encoded text message with LWS_PRE bytes of headroom, so lws can write the WebSocket
// header in place. A broadcast builds one Frame and every socket in the room queues the same one.
struct Frame {
	std::string bytes;
	std::string_view Text() const { return std::string_view(bytes).substr(LWS_PRE); }
};
using FrameRef = std::shared_ptr<Frame>;
FrameRef MakeFrame(std::string_view text);

// OutQueue is a FIFO that holds no allocation while empty (idle sockets must stay small). It counts
// the text bytes it holds: a frame shared by a room counts in full for every socket that queues it,
// so one client's budget does not depend on what the others do.
class OutQueue {
  public:
	void Push(FrameRef f)
	{
		bytes_ += f->Text().size();
		items_.push_back(std::move(f));
	}
	bool Empty() const { return head_ == items_.size(); }
	size_t Size() const { return items_.size() - head_; }
	size_t Bytes() const { return bytes_; }
	const Frame &Front() const { return *items_[head_]; }
	FrameRef Pop();
	void Clear();

  private:
	std::vector<FrameRef> items_;
	size_t head_ = 0;
	size_t bytes_ = 0;
};

struct Client;

// Application close codes (4000-4999) for /ws: 4401 / 4403 / 4400 mirror HTTP 401 / 403 / 400.
constexpr int kCloseUnauthorized = 4401;
constexpr int kCloseForbidden = 4403;
constexpr int kCloseBadRequest = 4400;

// Timer is one deadline in Gateway::Impl::timers; kind says what firing means for its owner.
struct Timer : TimerNode {
	enum class Kind : uint8_t { Heartbeat, Expiry, Probe, Keepalive, HighSeqRetry };
	Timer(Kind k, Client *o) : kind(k), owner(o) {}
	Kind kind;
	Client *owner;
};

// Client is one subscriber: a Socket.IO "/" socket (Session) or a plain /ws connection.
struct Client : std::enable_shared_from_this<Client> {
	enum class Kind { SocketIo, Plain };
	// Where a replay from the inbox stands: a catch-up asked for at connect, or a client that fell
	// --client-queue-bytes behind live delivery reading on from the inbox. A page is read only while
	// the client's queue is at most --catchup-page-bytes, so a client that does not read holds at most
	// about two pages.
	enum class Catchup : uint8_t {
		Off,          // no replay under way
		Querying,     // a page query is out (or queued in PgClient)
		WaitingDrain, // the queue is over --catchup-page-bytes: the next page waits for the client to read
		WaitingSlot,  // --query-queue is full: waits in catchup_waiting for a free slot
	};
	explicit Client(Kind k) : kind(k) {}
	virtual ~Client() = default;
	// Buffered is what this client holds in memory on its way out: the queue, and live messages held
	// back while its replay runs. Messages keep it within --client-queue-bytes (DropHeld, FallBehind);
	// anything else may take it kControlSlack further before the client is closed.
	size_t Buffered() const { return out.Bytes() + held_bytes; }

	Kind kind;
	bool authed = false;           // counted in clients_connected, in rooms (SetAuthed owns it)
	bool closed = false;           // torn down; late callbacks must ignore it
	bool close_due = false;        // close the transport at the next write opportunity
	int close_code = LWS_CLOSE_STATUS_NORMAL;
	std::string close_reason;
	std::vector<int64_t> allowed;  // the token's chats (sorted)
	std::vector<int64_t> joined;   // rooms joined (sorted)
	SeqGate<FrameRef> gate;
	size_t held_bytes = 0;         // text bytes of the live frames the gate holds during a replay
	OutQueue out;
	Catchup catchup = Catchup::Off;
	int64_t catchup_after = 0;     // the next page starts after this seq
	uint32_t catchup_run = 0;      // which replay a page answer belongs to (a socket may leave and rejoin)
	bool reread = false;           // held live messages were dropped since the last page was asked for
	TokenBucket sends;             // --send-rate / --send-burst
	Timer expiry{Timer::Kind::Expiry, this}; // fires at the token's exp
};

// Session is an Engine.IO session carrying the Socket.IO "/" namespace, on either transport.
struct Session : Client {
	Session() : Client(Kind::SocketIo) {}
	std::string sid;               // engine session id
	std::string socket_id;         // the namespace socket id, not the engine sid (docs/protocols/socketio.md, 'Layers and ids')
	std::string query_token;       // ?token= from the handshake, used when auth has none
	std::string peer;              // client IP address, for --max-unauthenticated-per-address
	bool pending = false;          // counted as unauthenticated (SetAuthed / DropClient own it)
	bool websocket = false;        // current transport: polling until the upgrade completes
	struct lws *ws = nullptr;      // the WebSocket once upgraded (or from the start)
	struct lws *probe = nullptr;   // a WebSocket being probed for the upgrade
	bool probe_pong_due = false;
	bool upgrading = false;        // probe answered: release held GETs with a noop
	struct lws *held_get = nullptr;
	bool post_busy = false;
	bool awaiting_pong = false;    // heartbeat is the pong deadline, not the next ping
	int64_t pings_before_connect = 0; // pings sent while the namespace CONNECT is still missing
	Timer heartbeat{Timer::Kind::Heartbeat, this};
	Timer probe_timer{Timer::Kind::Probe, this}; // --upgrade-timeout for the probe WebSocket
};

// PlainClient is one /ws connection.
struct PlainClient : Client {
	PlainClient() : Client(Kind::Plain) {}
	struct lws *wsi = nullptr;
	// Dead-peer detection: a WebSocket ping every --ping-interval; silence for a whole interval
	// after one closes the connection.
	Timer keepalive{Timer::Kind::Keepalive, this};
	bool heard = false;     // anything arrived since the last keepalive tick
	bool ping_sent = false; // a ping went out at the last tick
	bool ping_due = false;  // write a ping at the next writeable callback
};

// Conn is what lws' per-connection user space points to.
struct Conn {
	enum class Role { Http, PollGet, PollPost, SioWs, SioProbe, Plain };
	Role role = Role::Http;
	std::shared_ptr<Session> session;
	std::shared_ptr<PlainClient> plain;
	std::string rx;             // WebSocket message or POST body being assembled
	bool rx_too_big = false;
	bool cors = false;           // a /socket.io/ request: CORS headers for an allowed Origin
	bool response_ready = false; // an immediate HTTP response waits for HTTP_WRITEABLE
	int status = 200;
	std::string content_type, body;
};

struct QueryArgs {
	std::vector<std::pair<std::string, std::string>> items;
	std::string Get(std::string_view key) const;
	bool Has(std::string_view key) const;
};

struct Gateway::Impl {
	Impl(uv_loop_t *loop, const Config &cfg, PgClient &pg, Metrics &metrics);

	uv_loop_t *loop;
	const Config &cfg;
	PgClient &pg;
	Metrics &metrics;
	struct lws_context *ctx = nullptr;
	struct lws_vhost *metrics_vhost = nullptr; // --metrics-listen host:port: /metrics and /healthz only
	std::vector<std::string> cors_origins;     // --cors-origins, split
	std::shared_ptr<Impl *> alive; // weak copies tell Postgres callbacks whether we still exist

	std::unordered_map<std::string, std::shared_ptr<Session>> sessions; // by engine sid
	std::unordered_map<PlainClient *, std::shared_ptr<PlainClient>> plains;
	Rooms<Client> rooms;
	size_t client_count = 0;
	size_t pending_total = 0; // Engine.IO sessions without a namespace socket
	std::unordered_map<std::string, size_t> pending_by_peer;
	bool refusing_sessions = false; // a refusal was logged; cleared when a session is accepted
	size_t queries_out = 0;   // gateway queries handed to PgClient whose callback has not run
	std::deque<std::weak_ptr<Client>> catchup_waiting; // replays waiting for a --query-queue slot
	int64_t high_seq = -1; // highest inbox seq known (-1 until the first query answers)
	uint64_t frames_pushed = 0, catchup_runs = 0, catchup_messages = 0, sends_ok = 0, sends_failed = 0;
	uint64_t sends_limited = 0, sessions_refused = 0, clients_too_slow = 0, fell_behind = 0;
	bool shutting_down = false;
	std::function<void()> on_shutdown_done;
	uv_timer_t shutdown_timer{};
	Timer high_seq_retry{Timer::Kind::HighSeqRetry, nullptr};
	TimerHeap timers;
	std::unique_ptr<UvTimer> ticker; // armed for the heap's earliest deadline
	int64_t ticker_due = -1;         // what the ticker is armed for, -1 when idle
	std::string sql_catchup, sql_send, sql_high_seq;

	// gateway.cpp
	static int Callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) noexcept;
	int Dispatch(struct lws *wsi, enum lws_callback_reasons reason, Conn **slot, void *in, size_t len);
	void DeliverBatch(const std::vector<InboxMessage> &messages);
	void BeginShutdown(std::function<void()> done);
	void FinishShutdown();

	// http_routes.cpp
	int OnHttpRequest(struct lws *wsi, Conn *c, const char *path);
	// cors: a /socket.io/ response, which carries CORS headers for an origin in --cors-origins.
	int WriteHttp(struct lws *wsi, int status, const char *content_type, std::string_view body, bool cors);
	static std::string PeerAddress(struct lws *wsi);
	void Respond(struct lws *wsi, Conn *c, int status, const char *content_type, std::string body);
	int OnHttpWriteable(struct lws *wsi, Conn *c);
	QueryArgs ReadQuery(struct lws *wsi);
	std::string Header(struct lws *wsi, enum lws_token_indexes token);
	std::string HealthJson(int *status) const;
	std::string MetricsText() const;

	// http_polling.cpp
	int OnPolling(struct lws *wsi, Conn *c, const QueryArgs &q);
	int OnPollBody(struct lws *wsi, Conn *c, const void *in, size_t len);
	int OnPollBodyDone(struct lws *wsi, Conn *c);
	int WritePollResponse(struct lws *wsi, Conn *c);
	void OnHttpClosed(struct lws *wsi, Conn *c);

	// eio_session.cpp
	// NewSession is null when the unauthenticated-session caps are reached for peer.
	std::shared_ptr<Session> NewSession(bool websocket, const std::string &peer);
	bool PendingFull(const std::string &peer) const;
	void RefuseSession(const std::string &peer);
	void SetPending(Session &s, bool pending);
	// SetAuthed is the one place a client is counted in or out of clients_connected.
	void SetAuthed(Client &c, bool authed);
	void Enqueue(Client &c, FrameRef f);
	// Offer hands a live message to c: sent, held during its replay, left to the replay when c is too
	// far behind, or dropped as already sent.
	void Offer(Client &c, int64_t seq, const FrameRef &f);
	// Fits: f may be written now, or queued within --client-queue-bytes.
	bool Fits(Client &c, size_t bytes);
	// DropHeld frees the live messages c holds during its replay; the replay reads them again.
	void DropHeld(Client &c);
	// FallBehind stops queueing live messages for c and makes it read on from the inbox.
	void FallBehind(Client &c);
	void CloseTooSlow(Client &c);
	// Drained runs after frames left c's queue: a replay waiting for the client to read goes on.
	void Drained(Client &c);
	struct lws *OpenWebSocket(Client &c);
	bool WriteFrame(struct lws *wsi, const Frame &f);
	void EnqueueText(Client &c, std::string_view text) { Enqueue(c, MakeFrame(text)); }
	void Kick(Client &c);
	void StartHeartbeat(Session &s);
	void OnPingTimer(Session &s);
	void OnDeadline(Session &s);
	void OnTokenExpired(Client &c);
	void EndSocket(Session &s);
	void OnProbeTimeout(Session &s);
	void OnKeepalive(PlainClient &p);
	// DropProbe ends the upgrade attempt; tell_client closes the probe with a close frame.
	void DropProbe(Session &s, bool tell_client);
	// HandleEngineText handles one inbound Engine.IO packet; false = protocol violation.
	bool HandleEngineText(const std::shared_ptr<Session> &s, std::string_view text, bool via_websocket);
	bool HandleProbeText(const std::shared_ptr<Session> &s, struct lws *wsi, std::string_view text);
	void CloseClient(Client &c, int code, const std::string &reason);
	void DropClient(Client &c); // forget it entirely (leave rooms, stop timers, uncount)
	void DropCurrent(struct lws *wsi, Client *client); // DropClient from inside wsi's own callback
	int OnWebSocketWriteable(struct lws *wsi, Conn *c);
	int OnWebSocketReceive(struct lws *wsi, Conn *c, const void *in, size_t len);
	void OnWebSocketClosed(struct lws *wsi, Conn *c);
	void Reject(Client &c, const char *why, int code);

	// sio_handler.cpp
	bool HandleSocketIo(const std::shared_ptr<Session> &s, std::string_view text);
	void OnSioConnect(const std::shared_ptr<Session> &s, const nlohmann::json &auth, const std::string &nsp);
	void OnSioEvent(const std::shared_ptr<Session> &s, const nlohmann::json &args, std::optional<uint64_t> ack);
	void SioAck(Session &s, std::optional<uint64_t> ack, nlohmann::json value);

	// plain_ws.cpp
	bool OnPlainEstablished(struct lws *wsi, Conn *c);
	bool HandlePlainText(const std::shared_ptr<PlainClient> &p, std::string_view text);

	// shared by both protocols (gateway.cpp)
	// Admit puts an authorized client in its rooms and ends it when its token expires.
	void Admit(Client &c, const AuthResult &auth);
	bool Join(Client &c, int64_t chat);
	void Leave(Client &c, int64_t chat);
	bool Allowed(const Client &c, int64_t chat) const;
	void UpdateClientGauge();

	// deadlines.cpp
	void ScheduleIn(Timer &t, int64_t delay_ms);
	void Cancel(Timer &t);
	void ArmTicker();
	void OnTick();
	void Fire(Timer &t);

	// catchup.cpp
	void StartCatchup(const std::shared_ptr<Client> &c, int64_t after);
	void CatchupPage(const std::shared_ptr<Client> &c);
	void LoadHighSeq();
	// RunQuery is every gateway query's way to Postgres: it counts what is out for --query-queue.
	void RunQuery(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb);
	bool QueryQueueFull() const { return queries_out >= static_cast<size_t>(cfg.query_queue); }
	// client_send.cpp
	// SendRefusal is the error a send gets before any SQL (empty when it may go to Postgres): a NUL
	// in the body, a chat outside the token, over --send-rate, or --query-queue full.
	std::optional<nlohmann::json> SendRefusal(Client &c, int64_t chat_id, const std::string &body);
	// ClientSend: done gets {ok:true,message:{..}} or {ok:false,error:{..}}
	void ClientSend(int64_t chat_id, std::string body, std::function<void(nlohmann::json)> done);
};

} // namespace chat_outboxd
