// daemon/src/gateway/hub/hub.hpp - the centre of the gateway. The Hub owns the rooms, delivery (inbox
// messages from the consumer, each client's seq gate and byte budget), the deadlines, the counts of
// admitted and unauthenticated clients, and the counters /metrics shows. The endpoints (EngineIo,
// PlainWs) own their clients and what their protocol adds, and are reached through Endpoint; Catchup
// reads the inbox for clients that replay.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <uv.h>

#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "gateway/client/session.hpp"
#include "gateway/conversation/core/conversation_counters.hpp"
#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/hub/core/rooms.hpp"
#include "gateway/hub/core/user_index.hpp"
#include "gateway/hub/deadlines.hpp"
#include "gateway/hub/membership_view.hpp"
#include "bus/core/bus_metrics.hpp"
#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

class OutboxStatus;

class Catchup;
class QueryQueue;

class Hub {
  public:
	Hub(uv_loop_t *loop, const Config &cfg, Metrics &metrics, const BusMetrics &bus_metrics, const QueryQueue &queries);
	Hub(const Hub &) = delete;
	Hub &operator=(const Hub &) = delete;
	// SetCatchup: who reads the next replay page once a client has read its queue down.
	void SetCatchup(Catchup *c) { catchup = c; }
	// OnRoomChange sets what runs after a client joined (true) or left (false) a chat's room, the
	// client still in its state of the moment (gateway/conversation/conversation.*: presence, chat_state).
	void OnRoomChange(std::function<void(Client &, int64_t chat, bool joined)> fn) { room_change = std::move(fn); }
	// RoomMembers: the clients in a chat's room (null when none).
	const Rooms<Client>::Set *RoomMembers(int64_t chat) const { return rooms.Members(chat); }

	// --- who is connected
	// AddEndpoint: an endpoint whose clients shutdown and /metrics see.
	void AddEndpoint(Endpoint &e) { endpoints.push_back(&e); }
	std::vector<std::shared_ptr<Client>> AllClients() const;
	// ForgetClients lets go of every client without closing them (shutdown, after lws let go).
	void ForgetClients();
	size_t ClientCount() const { return client_count; }

	// --- admission
	// PendingFull: a new session from peer would pass --max-unauthenticated(-per-address).
	bool PendingFull(const std::string &peer) const;
	// RefuseSession counts a refused handshake; the log says so once per run of refusals.
	void RefuseSession(const std::string &peer);
	void SessionAccepted() { refusing_sessions = false; }
	// SetPending counts s in or out of the unauthenticated sessions.
	void SetPending(Session &s, bool pending);
	// SetAuthed is the one place a client is counted in or out of clients_connected.
	void SetAuthed(Client &c, bool authed);
	// Admit puts an authorized client in its rooms and ends its grant when its token expires.
	void Admit(Client &c, const AuthResult &auth);
	bool Allowed(const Client &c, int64_t chat) const;
	// --authz membership (gateway/auth/membership.*): Revoke takes chat from what c may see and out of its
	// room (false when c could not see it); Allow lets c join chat, within its token's chats claim and
	// --max-member-chats (false when c holds that many already, or the claim leaves chat out).
	bool Revoke(Client &c, int64_t chat);
	bool Allow(Client &c, int64_t chat);
	// SetMembership: who answers a sub's chats with --authz membership (null in token mode).
	void SetMembership(MembershipView *m) { membership = m; }
	// --authz membership: the admitted clients of a sub on this gateway (SetAuthed keeps the index),
	// and what runs when a sub's last one is gone (its cached chats may go).
	std::vector<std::shared_ptr<Client>> ClientsOf(const std::string &sub) const;
	bool HasClientsOf(const std::string &sub) const { return user_clients.Of(sub) != nullptr; }
	void OnUserGone(std::function<void(const std::string &sub)> fn) { user_gone = std::move(fn); }
	MembershipView *Members() const { return membership; }
	// TakeRoomChange spends one of c's tokens for a join or leave it asked for (the joins of its
	// admission are free): false, with *retry_after_ms, when it has none left. Each join costs the
	// gateway a presence script in Redis and its share of a chat_state lookup in Postgres, and a leave undoes the
	// presence, so no client may ask for them without bound (conv::kRoomChangeRate).
	bool TakeRoomChange(Client &c, int64_t *retry_after_ms);
	bool Join(Client &c, int64_t chat);
	void Leave(Client &c, int64_t chat);
	// AskJoin is a `join` the client asked for: a chat it may see is joined at once; with --authz
	// membership one it does not hold is asked of the membership (past a cut list, of the database)
	// and joined in a free place (TooMany when it holds --max-member-chats). done runs unless c is
	// gone by then.
	enum class JoinAnswer : uint8_t { Joined,
		                              Forbidden,
		                              TooMany,
		                              Unavailable };
	void AskJoin(Client &c, int64_t chat, std::function<void(JoinAnswer)> done);
	// JoinError: what a refused join answers, the same word in both protocols (docs/client-protocol.md).
	static const char *JoinError(JoinAnswer a);
	// AskLeave is a `leave` the client asked for: with --authz membership and a user in more chats
	// than the bound, the chat's place is given back too (the chat is joined again by AskJoin).
	void AskLeave(Client &c, int64_t chat);
	void LeaveAll(Client &c);

	// --- delivery
	// Deliver pushes committed inbox messages, in seq order, to their rooms.
	void Deliver(const std::vector<InboxMessage> &messages);
	int64_t HighSeq() const { return high_seq; }
	// Ready: the gateway knows where the inbox stands (the bus's first read answered), so it can tell
	// a new client where to resume from. Until then it admits no client.
	bool Ready() const { return high_seq >= 0; }
	void SeenSeq(int64_t seq) { high_seq = std::max(high_seq, seq); }
	// Enqueue writes f to c now when its WebSocket keeps up, else queues it (a client that lets more
	// than --client-queue-bytes + kControlSlack wait is closed "too slow").
	void Enqueue(Client &c, FrameRef f);
	void EnqueueText(Client &c, std::string_view text) { Enqueue(c, MakeFrame(text)); }
	// Fits: a frame of that size may be written now, or queued within --client-queue-bytes.
	bool Fits(Client &c, size_t bytes);
	// DropHeld frees the live messages c holds during its replay; the replay reads them again.
	void DropHeld(Client &c);
	// Drained runs after frames left c's queue: a replay waiting for the client to read goes on.
	void Drained(Client &c);
	// WriteQueued serves a writeable callback of c's WebSocket: the close frame of a closing client,
	// else what the transport owes and the queued frames. Returns what the lws callback returns.
	int WriteQueued(struct lws *wsi, Client *c);
	// Receive assembles a WebSocket message from c into rx and hands the whole text to handle; it
	// refuses binary frames, messages over --max-payload and invalid UTF-8, closing only this
	// connection. probe: wsi is an upgrade probe, whose faults leave its session alone.
	int Receive(struct lws *wsi, Client *c, std::string &rx, const void *in, size_t len, bool probe,
	            const std::function<bool(std::string_view)> &handle);

	// --- closing
	// MarkClosing moves an Open client to Closing with code and reason; false if it was not Open.
	bool MarkClosing(Client &c, int code, const std::string &reason);
	void Close(Client &c, int code, const std::string &reason) { c.endpoint.Close(c, code, reason); }
	void Drop(Client &c) { c.endpoint.Drop(c); }
	// Forget is the part of Endpoint::Drop every kind shares: Closed, out of rooms and counts, its
	// queue and replay freed.
	void Forget(Client &c);
	// DropCurrent drops c from inside wsi's own callback, which returns -1 so lws closes wsi itself.
	void DropCurrent(struct lws *wsi, Client *c);
	// Reject counts a bad client frame and closes that client.
	void Reject(Client &c, const char *why, int code);

	// --- deadlines
	void ScheduleIn(Deadline &d, int64_t delay_ms) { deadlines.ScheduleIn(d, delay_ms); }
	void Cancel(Deadline &d) { deadlines.Cancel(d); }
	void DropDeadlines() { deadlines.DropAll(); }
	int64_t NowMs() const { return static_cast<int64_t>(uv_now(loop)); }

	// --- counters and state for /metrics and /healthz
	void CountCatchupRun() { catchup_runs++; }
	void CountCatchupMessage() { catchup_messages++; }
	// The statements of the joins' batched reads (a replay page for a line of clients, chat_state's unread
	// counts for a chat's joins): with the counts of what they served, what /metrics shows of the batching.
	void CountCatchupRead(size_t clients) { catchup_reads++, catchup_read_clients += clients; }
	void CountChatStateRead(size_t joins) { chat_state_reads++, chat_state_read_joins += joins; }
	void CountSend(bool ok) { ok ? sends_ok++ : sends_failed++; }
	void CountSendLimited() { sends_limited++; }
	void CountFrameRejected() { frames_rejected++; }
	conv::Counters &ConversationCounters() { return conversation_counters; }
	bool ShuttingDown() const { return shutting_down; }
	void SetShuttingDown() { shutting_down = true; }
	// HealthJson and MetricsText are the bodies of /healthz and /metrics (hub_figures.cpp).
	std::string HealthJson(int *status) const;
	std::string MetricsText() const;
	// SetOutboxStatus: the relay's figures /metrics appends (--outbox-status-url); it outlives the Hub.
	void SetOutboxStatus(const OutboxStatus *s) { outbox_status = s; }

  private:
	// Offer hands a live message to c: sent, held during its replay, left to the replay when c is too
	// far behind, or dropped as already sent.
	void Offer(Client &c, int64_t seq, const FrameRef &f);
	// FallBehind stops queueing live messages for c and makes it read on from the inbox.
	void FallBehind(Client &c);
	void CloseTooSlow(Client &c);
	bool WriteFrame(struct lws *wsi, const Frame &f);
	void Fire(Deadline &d);

	// Fields are named as the figures /healthz and /metrics print (HealthJson, MetricsText).
	uv_loop_t *loop;
	const Config &cfg;
	Metrics &metrics;
	const BusMetrics &bus_metrics;
	const QueryQueue &queries;
	const OutboxStatus *outbox_status = nullptr;
	Catchup *catchup = nullptr;
	MembershipView *membership = nullptr;
	std::function<void(Client &, int64_t, bool)> room_change;
	std::function<void(const std::string &)> user_gone;
	UserIndex<Client> user_clients; // --authz membership only: admitted clients with a sub, by sub
	uint64_t next_serial = 0;
	std::vector<Endpoint *> endpoints;
	Rooms<Client> rooms;
	size_t client_count = 0;
	size_t pending_total = 0; // Engine.IO sessions without a namespace socket
	std::unordered_map<std::string, size_t> pending_by_peer;
	bool refusing_sessions = false; // a refusal was logged; cleared when a session is accepted
	int64_t high_seq = -1;          // highest inbox seq known (-1 until the bus first read the inbox)
	conv::Counters conversation_counters;
	uint64_t frames_rejected = 0; // malformed/oversized client frames (connection closed)
	uint64_t frames_pushed = 0, catchup_runs = 0, catchup_messages = 0, sends_ok = 0, sends_failed = 0;
	uint64_t catchup_reads = 0, catchup_read_clients = 0, chat_state_reads = 0, chat_state_read_joins = 0;
	uint64_t sends_limited = 0, sessions_refused = 0, clients_too_slow = 0, fell_behind = 0;
	bool shutting_down = false;
	Deadlines deadlines;
};

} // namespace chat_outboxd
