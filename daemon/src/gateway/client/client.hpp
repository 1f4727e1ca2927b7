// daemon/src/gateway/client/client.hpp - Client: what the parts of the gateway share about a client (its
// outbound queue, its deadlines, its life and auth phases), the Endpoint that owns each kind of client
// (a Socket.IO session on Engine.IO: session.hpp; a plain /ws connection: plain_client.hpp), and the
// lws helpers every kind uses to close.
//
// Everything runs on the daemon's single libuv loop: no locks. Clients are shared_ptr-owned (by the
// Hub's tables) and Postgres callbacks hold weak_ptrs, since a client may go before its answer comes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <libwebsockets.h>

#include "gateway/client/core/rate_limit.hpp"
#include "gateway/client/core/seq_gate.hpp"
#include "gateway/client/core/timer_heap.hpp"
#include "gateway/client/frame.hpp"
#include "gateway/client/out_queue.hpp"

namespace chat_outboxd {

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
	enum class Kind : uint8_t { Heartbeat,
		                        Expiry,
		                        Probe,
		                        Keepalive };
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
	enum class Kind : uint8_t { SocketIo,
		                        Plain };
	// Life: Open -> Closing -> Closed, or Open -> Closed.
	//   Open:    frames are queued and written.
	//   Closing: nothing more is queued, what the client sends is ignored, and the transport closes at
	//            its next write opportunity with close_code and close_reason (Hub::MarkClosing; a
	//            connection found broken while writing keeps the default 1000).
	//   Closed:  out of every room, count and table (Endpoint::Drop); late callbacks ignore it.
	enum class Life : uint8_t { Open,
		                        Closing,
		                        Closed };
	// Auth: Connecting until a token admits the client (Hub::Admit). Only Admitted clients are in
	// rooms and counted in clients_connected; Hub::SetAuthed is the one place that moves it. A
	// Socket.IO socket that ends while its engine session goes on (DISCONNECT, token expiry) is
	// Connecting again; a refused /ws client stays Connecting while it closes.
	enum class Auth : uint8_t { Connecting,
		                        Admitted };
	// Replay: where a replay from the inbox stands: a catch-up asked for at connect, or a client that
	// fell --client-queue-bytes behind live delivery reading on from the inbox. A page is read only
	// while the client's queue is at most --catchup-page-bytes, so a client that does not read holds
	// at most about two pages.
	enum class Replay : uint8_t {
		Off,          // no replay under way
		Querying,     // a page query is out (or queued in PgClient)
		WaitingDrain, // the queue is over --catchup-page-bytes: the next page waits for the client to read
		InLine,       // in Catchup's line for its chats: the next page read for them (one is out, or --query-queue is full)
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
	std::vector<int64_t> allowed; // the chats it may see (sorted): the token's, or with --authz membership its sub's
	// --authz membership with a `chats` claim: the claim (sorted), which narrows chats added later
	std::vector<int64_t> token_chats;
	bool has_chats_claim = false;
	std::vector<int64_t> joined; // rooms joined (sorted)
	// Delivery state, kept by the Hub and Catchup.
	SeqGate<FrameRef> gate;
	size_t held_bytes = 0; // text bytes of the live frames the gate holds during a replay
	OutQueue out;
	Replay replay = Replay::Off;
	int64_t replay_after = 0; // the next page starts after this seq
	uint32_t replay_run = 0;  // which replay a page answer belongs to (a socket may leave and rejoin)
	bool reread = false;      // held live messages were dropped since the last page was asked for
	TokenBucket sends;        // --send-rate / --send-burst
	// Conversation events (gateway/conversation/conversation.*): who the client is and its request rates.
	std::string sub, name; // the token's sub (empty or unusable: no presence, read, typing) and name
	uint64_t serial = 0;   // this client's number in the gateway, part of its presence member
	TokenBucket history_rate, read_rate, typing_rate, presence_rate;
	TokenBucket room_changes;                      // the client's own joins and leaves (Hub::TakeRoomChange)
	int history_out = 0;                           // history queries out for this client (at most conv::kMaxHistoryInFlight)
	Deadline expiry{Deadline::Kind::Expiry, this}; // fires at the token's exp

  private:
	virtual void AskWriteable() = 0;
};

} // namespace chat_outboxd
