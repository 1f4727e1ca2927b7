// daemon/src/gateway/clients.hpp - what the parts of the gateway share about a client: the frames it
// is sent and its outbound queue, its deadlines, its life and auth phases, and its two kinds (a
// Socket.IO session on Engine.IO, a plain /ws connection). Conn is what lws keeps per connection.
//
// Everything runs on the daemon's single libuv loop: no locks. Clients are shared_ptr-owned (by the
// Hub's tables) and Postgres callbacks hold weak_ptrs, since a client may go before its answer comes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <libwebsockets.h>

#include "gateway/core/engineio.hpp"
#include "gateway/core/rate_limit.hpp"
#include "gateway/core/seq_gate.hpp"
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

// Application close codes (4000-4999) for /ws: 4401 / 4403 / 4400 mirror HTTP 401 / 403 / 400.
constexpr int kCloseUnauthorized = 4401;
constexpr int kCloseForbidden = 4403;
constexpr int kCloseBadRequest = 4400;

// KillAsync has lws close wsi from its own loop (null: nothing to do).
void KillAsync(struct lws *wsi);
// WriteCloseFrame is for a WRITEABLE callback about to return -1: lws (4.1.6) sends no close frame
// then, even after lws_close_reason(), and the client would see 1006 instead of our code.
void WriteCloseFrame(struct lws *wsi, int code, const std::string &reason);

struct Client;

// Deadline is one entry in the Hub's deadline heap; kind says what firing means for its owner.
struct Deadline : TimerNode {
	enum class Kind : uint8_t { Heartbeat, Expiry, Probe, Keepalive };
	Deadline(Kind k, Client *o) : kind(k), owner(o) {}
	Kind kind;
	Client *owner;
};

// Endpoint owns one kind of client and its table of them (EngineIo: Socket.IO sessions by engine sid;
// PlainWs: /ws connections). The Hub calls it for what only that protocol knows.
class Endpoint {
  public:
	virtual ~Endpoint() = default;
	// Close ends c with code and reason once its transport can carry them (nothing if c is not Open).
	virtual void Close(Client &c, int code, const std::string &reason) = 0;
	// Drop forgets c at once: rooms, counts, deadlines, its table entry, its connections.
	virtual void Drop(Client &c) = 0;
	// OnDeadline runs when one of the endpoint's deadlines is due.
	virtual void OnDeadline(Deadline &d) = 0;
	// ForEach calls fn for every client in the endpoint's table.
	virtual void ForEach(const std::function<void(Client &)> &fn) const = 0;
	// ForgetAll lets go of every client without closing it (shutdown, once lws let go of them).
	virtual void ForgetAll() = 0;
};

// Client is one subscriber: a Socket.IO "/" socket (Session) or a plain /ws connection (PlainClient).
struct Client : std::enable_shared_from_this<Client> {
	enum class Kind : uint8_t { SocketIo, Plain };
	// Life: Open -> Closing -> Closed, or Open -> Closed.
	//   Open:    frames are queued and written.
	//   Closing: nothing more is queued, what the client sends is ignored, and the transport closes at
	//            its next write opportunity with close_code and close_reason (Hub::MarkClosing; a
	//            connection found broken while writing keeps the default 1000).
	//   Closed:  out of every room, count and table (Endpoint::Drop); late callbacks ignore it.
	enum class Life : uint8_t { Open, Closing, Closed };
	// Auth: Connecting until a token admits the client (Hub::Admit). Only Admitted clients are in
	// rooms and counted in clients_connected; Hub::SetAuthed is the one place that moves it. A
	// Socket.IO socket that ends while its engine session goes on (DISCONNECT, token expiry) is
	// Connecting again; a refused /ws client stays Connecting while it closes.
	enum class Auth : uint8_t { Connecting, Admitted };
	// Replay: where a replay from the inbox stands: a catch-up asked for at connect, or a client that
	// fell --client-queue-bytes behind live delivery reading on from the inbox. A page is read only
	// while the client's queue is at most --catchup-page-bytes, so a client that does not read holds
	// at most about two pages.
	enum class Replay : uint8_t {
		Off,          // no replay under way
		Querying,     // a page query is out (or queued in PgClient)
		WaitingDrain, // the queue is over --catchup-page-bytes: the next page waits for the client to read
		WaitingSlot,  // --query-queue is full: waits in Catchup's line for a free slot
	};

	Client(Kind k, Endpoint &e) : kind(k), endpoint(e) {}
	virtual ~Client() = default;
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	bool IsOpen() const { return life == Life::Open; }
	bool IsClosed() const { return life == Life::Closed; }
	bool Admitted() const { return auth == Auth::Admitted; }
	// Buffered is what this client holds in memory on its way out: the queue, and live messages held
	// back while its replay runs. Messages keep it within --client-queue-bytes (Hub: DropHeld,
	// FallBehind); anything else may take it a little further before the client is closed.
	size_t Buffered() const { return out.Bytes() + held_bytes; }
	// OpenWebSocket is the established WebSocket frames are written to, or null (polling, probing).
	virtual struct lws *OpenWebSocket() const = 0;
	// Kick asks for a writeable callback on whatever carries the queue now.
	void Kick()
	{
		if (!IsClosed())
			AskWriteable();
	}
	// ForgetWsi: lws is closing wsi itself (its callback returns -1), so it must not be killed again.
	virtual void ForgetWsi(struct lws *wsi) = 0;
	// WriteControl writes what the transport owes before queued frames (a /ws keepalive ping); false
	// when the connection broke.
	virtual bool WriteControl(struct lws *) { return true; }

	const Kind kind;
	Endpoint &endpoint;
	Life life = Life::Open;
	Auth auth = Auth::Connecting;
	int close_code = LWS_CLOSE_STATUS_NORMAL;
	std::string close_reason;
	std::vector<int64_t> allowed;  // the chats it may see (sorted): the token's, or with --authz membership its sub's
	// --authz membership with a `chats` claim: the claim (sorted), which narrows chats added later
	std::vector<int64_t> token_chats;
	bool has_chats_claim = false;
	std::vector<int64_t> joined;   // rooms joined (sorted)
	// Delivery state, kept by the Hub and Catchup.
	SeqGate<FrameRef> gate;
	size_t held_bytes = 0;         // text bytes of the live frames the gate holds during a replay
	OutQueue out;
	Replay replay = Replay::Off;
	int64_t replay_after = 0;      // the next page starts after this seq
	uint32_t replay_run = 0;       // which replay a page answer belongs to (a socket may leave and rejoin)
	bool reread = false;           // held live messages were dropped since the last page was asked for
	TokenBucket sends;             // --send-rate / --send-burst
	// Conversation events (gateway/conversation.*): who the client is and its request rates.
	std::string sub, name;         // the token's sub (empty or unusable: no presence, read, typing) and name
	uint64_t serial = 0;           // this client's number in the gateway, part of its presence member
	TokenBucket history_rate, read_rate, typing_rate, presence_rate;
	TokenBucket room_changes;      // the client's own joins and leaves (Hub::TakeRoomChange)
	int history_out = 0;           // history queries out for this client (at most conv::kMaxHistoryInFlight)
	Deadline expiry{Deadline::Kind::Expiry, this}; // fires at the token's exp

  private:
	virtual void AskWriteable() = 0;
};

// Session is an Engine.IO session carrying the Socket.IO "/" namespace, on either transport.
struct Session final : Client {
	// Transport: Polling, Probing, Upgrading or WebSocket (core/engineio.hpp states the rules). probe is
	// set exactly in Probing and Upgrading; Closing is the client's Life, on any transport.
	using Transport = eio::Transport;
	// Beat: what the heartbeat deadline is (the server pings, docs/protocols/socketio.md, 'Heartbeat').
	//   NextPing:     the next "2" is due --ping-interval after the handshake or the last pong.
	//   AwaitingPong: a "2" went out; no "3" by --ping-timeout closes the session.
	enum class Beat : uint8_t { NextPing, AwaitingPong };

	Session(Endpoint &e, Transport t) : Client(Kind::SocketIo, e), transport(t) {}
	struct lws *OpenWebSocket() const override { return transport == Transport::WebSocket ? ws : nullptr; }
	void ForgetWsi(struct lws *wsi) override
	{
		if (ws == wsi)
			ws = nullptr;
	}

	std::string sid;               // engine session id
	std::string socket_id;         // the namespace socket id, not the engine sid (docs/protocols/socketio.md, 'Layers and ids')
	std::string query_token;       // ?token= from the handshake, used when auth has none
	std::string peer;              // client IP address, for --max-unauthenticated-per-address
	bool counted_unauthenticated = false; // in the Hub's unauthenticated-session counts (Hub::SetPending)
	Transport transport;
	struct lws *ws = nullptr;      // the WebSocket once upgraded (or from the start)
	struct lws *probe = nullptr;   // the WebSocket being probed for the upgrade
	bool probe_pong_due = false;   // "3probe" is to be written on the probe
	struct lws *held_get = nullptr;
	bool post_busy = false;
	Beat beat = Beat::NextPing;
	int64_t pings_before_connect = 0; // pings sent while the namespace CONNECT is still missing
	Deadline heartbeat{Deadline::Kind::Heartbeat, this};
	Deadline probe_timer{Deadline::Kind::Probe, this}; // --upgrade-timeout for the probe WebSocket

  private:
	void AskWriteable() override;
};

// PlainClient is one /ws connection.
struct PlainClient final : Client {
	explicit PlainClient(Endpoint &e) : Client(Kind::Plain, e) {}
	struct lws *OpenWebSocket() const override { return wsi; }
	void ForgetWsi(struct lws *w) override
	{
		if (wsi == w)
			wsi = nullptr;
	}
	bool WriteControl(struct lws *w) override;

	struct lws *wsi = nullptr;
	// Dead-peer detection: a WebSocket ping every --ping-interval; silence for a whole interval
	// after one closes the connection.
	Deadline keepalive{Deadline::Kind::Keepalive, this};
	bool heard = false;     // anything arrived since the last keepalive tick
	bool ping_sent = false; // a ping went out at the last tick
	bool ping_due = false;  // write a ping at the next writeable callback

  private:
	void AskWriteable() override;
};

// Conn is what lws' per-connection user space points to.
struct Conn {
	enum class Role : uint8_t { Http, PollGet, PollPost, SioWs, SioProbe, Plain };
	Role role = Role::Http;
	std::shared_ptr<Session> session;
	std::shared_ptr<PlainClient> plain;
	std::string rx;             // WebSocket message or POST body being assembled
	bool rx_too_big = false;
	bool cors = false;           // a /socket.io/ request: CORS headers for an allowed Origin
	bool response_ready = false; // an immediate HTTP response waits for HTTP_WRITEABLE
	bool close_after = false;    // that response ends the connection (the rest of the request is not read)
	int status = 200;
	std::string content_type, body;
};

} // namespace chat_outboxd
