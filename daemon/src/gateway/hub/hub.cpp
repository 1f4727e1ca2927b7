// daemon/src/gateway/hub/hub.cpp - see hub.hpp.
#include "gateway/hub/hub.hpp"

#include <algorithm>
#include <ctime>

#include "base/log.hpp"
#include "gateway/hub/catchup.hpp"
#include "gateway/conversation/core/conversation.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/client/core/message_json.hpp"

namespace chat_outboxd {

namespace {

// What a client's queue may hold beyond --client-queue-bytes in frames that are not messages (acks,
// pongs, errors, pings): messages never go over the budget, so only a client that keeps sending
// requests without reading the answers gets here.
constexpr size_t kControlSlack = 256 * 1024;
// A client closed "too slow" gets its close frame once it reads what the kernel still holds for it;
// one that does not read by then loses the connection without one.
constexpr int kTooSlowGraceSeconds = 5;
// WebSocket frames written per writeable callback while the kernel takes them.
constexpr int kFramesPerWrite = 32;

} // namespace

Hub::Hub(uv_loop_t *l, const Config &c, Metrics &m, const BusMetrics &bm, const QueryQueue &q)
    : loop(l), cfg(c), metrics(m), bus_metrics(bm), queries(q),
      deadlines(
          l, [this](Deadline &d) { Fire(d); },
          [this](Deadline &d, const std::exception &e) {
	Log(Level::Warning, "gateway: timer error: %s", e.what());
	if (d.owner)
		Close(*d.owner, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal error");
          })
{
}

void
Hub::Fire(Deadline &d)
{
	if (d.owner)
		d.owner->endpoint.OnDeadline(d);
}

std::vector<std::shared_ptr<Client>>
Hub::AllClients() const
{
	std::vector<std::shared_ptr<Client>> all;
	for (const Endpoint *e : endpoints)
		e->ForEach([&all](Client &c) { all.push_back(c.shared_from_this()); });
	return all;
}

void
Hub::ForgetClients()
{
	user_clients.Clear();
	for (Endpoint *e : endpoints)
		e->ForgetAll();
}

std::vector<std::shared_ptr<Client>>
Hub::ClientsOf(const std::string &sub) const
{
	std::vector<std::shared_ptr<Client>> out;
	if (const auto *list = user_clients.Of(sub))
		for (Client *c : *list)
			out.push_back(c->shared_from_this());
	return out;
}

// A session without a namespace socket costs the daemon a slot and a heartbeat and proves nothing
// about its peer, so their number is capped in total and per address.
bool
Hub::PendingFull(const std::string &peer) const
{
	if (pending_total >= static_cast<size_t>(cfg.max_unauthenticated))
		return true;
	auto it = pending_by_peer.find(peer);
	return it != pending_by_peer.end() && it->second >= static_cast<size_t>(cfg.max_unauthenticated_per_address);
}

void
Hub::RefuseSession(const std::string &peer)
{
	sessions_refused++;
	if (refusing_sessions)
		return;
	refusing_sessions = true;
	Log(Level::Warning,
	    "gateway: refusing Engine.IO handshakes (first from %s): %zu unauthenticated sessions open "
	    "(--max-unauthenticated %lld, --max-unauthenticated-per-address %lld); logged again after one is accepted",
	    peer.c_str(), pending_total, static_cast<long long>(cfg.max_unauthenticated),
	    static_cast<long long>(cfg.max_unauthenticated_per_address));
}

void
Hub::SetPending(Session &s, bool pending)
{
	if (s.counted_unauthenticated == pending)
		return;
	s.counted_unauthenticated = pending;
	if (pending) {
		pending_total++;
		pending_by_peer[s.peer]++;
		return;
	}
	pending_total--;
	auto it = pending_by_peer.find(s.peer);
	if (it != pending_by_peer.end() && --it->second == 0)
		pending_by_peer.erase(it);
}

void
Hub::SetAuthed(Client &c, bool authed)
{
	Client::Auth to = authed ? Client::Auth::Admitted : Client::Auth::Connecting;
	if (c.auth == to)
		return;
	c.auth = to;
	if (authed)
		client_count++;
	else
		client_count--;
	// c.sub is set only while c is Connecting (Admit), so it is the key it was added under.
	if (membership && !c.sub.empty()) {
		if (authed)
			user_clients.Add(c.sub, &c);
		else if (user_clients.Remove(c.sub, &c) && user_gone)
			user_gone(c.sub);
	}
	if (c.kind == Client::Kind::SocketIo)
		SetPending(static_cast<Session &>(c), !authed && !c.IsClosed());
}

void
Hub::Admit(Client &c, const AuthResult &auth)
{
	c.allowed = auth.allowed;
	c.has_chats_claim = membership && auth.has_chats;
	if (c.has_chats_claim)
		c.token_chats = auth.token_chats;
	c.sub = auth.sub;
	c.name = auth.name;
	c.serial = ++next_serial;
	for (int64_t r : auth.rooms)
		Join(c, r);
	// A token is a grant until its exp, not for as long as the connection lasts.
	int64_t left_s = std::max<int64_t>(0, auth.expires_at - static_cast<int64_t>(std::time(nullptr)));
	ScheduleIn(c.expiry, left_s * 1000);
	SetAuthed(c, true);
}

bool
Hub::Allowed(const Client &c, int64_t chat) const
{
	return std::binary_search(c.allowed.begin(), c.allowed.end(), chat);
}

bool
Hub::Revoke(Client &c, int64_t chat)
{
	auto it = std::lower_bound(c.allowed.begin(), c.allowed.end(), chat);
	if (it == c.allowed.end() || *it != chat)
		return false;
	c.allowed.erase(it);
	Leave(c, chat);
	// live messages held during a replay may be of that chat: the replay reads them again, without it
	if (c.replay != Client::Replay::Off && c.held_bytes)
		DropHeld(c);
	return true;
}

bool
Hub::Allow(Client &c, int64_t chat)
{
	if (c.has_chats_claim && !std::binary_search(c.token_chats.begin(), c.token_chats.end(), chat))
		return false;
	auto it = std::lower_bound(c.allowed.begin(), c.allowed.end(), chat);
	if (it != c.allowed.end() && *it == chat)
		return true;
	if (c.allowed.size() >= static_cast<size_t>(cfg.max_member_chats))
		return false;
	c.allowed.insert(it, chat);
	return true;
}

void
Hub::AskJoin(Client &c, int64_t chat, std::function<void(JoinAnswer)> done)
{
	if (Join(c, chat)) {
		done(JoinAnswer::Joined);
		return;
	}
	if (!membership || (c.has_chats_claim && !std::binary_search(c.token_chats.begin(), c.token_chats.end(), chat))) {
		done(JoinAnswer::Forbidden);
		return;
	}
	std::weak_ptr<Client> weak = c.shared_from_this();
	membership->IsMember(c.sub, chat, [this, weak, chat, done = std::move(done)](MembershipView::Answer a) {
		auto live = weak.lock();
		if (!live || !live->IsOpen() || live->auth != Client::Auth::Admitted)
			return;
		if (a == MembershipView::Answer::Unavailable)
			done(JoinAnswer::Unavailable);
		else if (a == MembershipView::Answer::No)
			done(JoinAnswer::Forbidden);
		else if (!Allow(*live, chat))
			done(JoinAnswer::TooMany);
		else
			done(Join(*live, chat) ? JoinAnswer::Joined : JoinAnswer::Forbidden);
	});
}

const char *
Hub::JoinError(JoinAnswer a)
{
	switch (a) {
	case JoinAnswer::TooMany:
		return "too_many_chats";
	case JoinAnswer::Unavailable:
		return "unavailable";
	default:
		return "forbidden";
	}
}

void
Hub::AskLeave(Client &c, int64_t chat)
{
	Leave(c, chat);
	if (!membership || !membership->Cut(c.sub))
		return;
	auto it = std::lower_bound(c.allowed.begin(), c.allowed.end(), chat);
	if (it != c.allowed.end() && *it == chat)
		c.allowed.erase(it);
}

bool
Hub::Join(Client &c, int64_t chat)
{
	if (!Allowed(c, chat))
		return false;
	auto it = std::lower_bound(c.joined.begin(), c.joined.end(), chat);
	if (it == c.joined.end() || *it != chat) {
		c.joined.insert(it, chat);
		rooms.Join(chat, &c);
		if (room_change)
			room_change(c, chat, true);
	}
	return true;
}

bool
Hub::TakeRoomChange(Client &c, int64_t *retry_after_ms)
{
	if (c.room_changes.Take(NowMs(), conv::kRoomChangeRate.per_second, conv::kRoomChangeRate.burst))
		return true;
	*retry_after_ms = c.room_changes.RetryAfterMs(conv::kRoomChangeRate.per_second);
	return false;
}

void
Hub::Leave(Client &c, int64_t chat)
{
	auto it = std::lower_bound(c.joined.begin(), c.joined.end(), chat);
	if (it != c.joined.end() && *it == chat) {
		c.joined.erase(it);
		rooms.Leave(chat, &c);
		if (room_change)
			room_change(c, chat, false);
	}
}

void
Hub::LeaveAll(Client &c)
{
	std::vector<int64_t> left;
	left.swap(c.joined);
	for (int64_t chat : left) {
		rooms.Leave(chat, &c);
		if (room_change)
			room_change(c, chat, false);
	}
}

void
Hub::Deliver(const std::vector<InboxMessage> &messages)
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

// WriteFrame writes one text frame; false when the connection is broken. lws keeps what the kernel
// did not take and sends it first at the next writeable callback (lws_partial_buffered).
bool
Hub::WriteFrame(struct lws *wsi, const Frame &f)
{
	size_t n = f.bytes.size() - LWS_PRE;
	// lws writes the frame header into the LWS_PRE headroom: the same bytes for every socket, so
	// sharing one Frame between sockets is safe on this single thread.
	auto *text = reinterpret_cast<unsigned char *>(const_cast<char *>(&f.bytes[LWS_PRE]));
	if (lws_write(wsi, text, n, LWS_WRITE_TEXT) < static_cast<int>(n))
		return false;
	frames_pushed++;
	return true;
}

void
Hub::Enqueue(Client &c, FrameRef f)
{
	if (!c.IsOpen())
		return;
	// The common case, a broadcast to sockets that keep up: one send() now, like Node's
	// socket.write(). Waiting for a writeable callback instead costs two epoll_ctl calls and a
	// loop pass per socket, 10,000 of each for one message to a big room.
	struct lws *wsi = c.OpenWebSocket();
	if (wsi && c.out.Empty() && !lws_partial_buffered(wsi)) {
		if (!WriteFrame(wsi, *f)) {
			// Broken connection: its close callback drops the client (not here: the caller may be
			// iterating the room this client is in).
			c.life = Client::Life::Closing;
			KillAsync(wsi);
		}
		return;
	}
	if (c.Buffered() + f->Text().size() > static_cast<size_t>(cfg.client_queue_bytes) + kControlSlack) {
		CloseTooSlow(c);
		return;
	}
	c.out.Push(std::move(f));
	c.Kick();
}

bool
Hub::Fits(Client &c, size_t bytes)
{
	struct lws *wsi = c.OpenWebSocket();
	if (wsi && c.out.Empty() && !lws_partial_buffered(wsi))
		return true; // written at once (Enqueue)
	return c.Buffered() + bytes <= static_cast<size_t>(cfg.client_queue_bytes);
}

// Every message a client gets is in the inbox first, so no message has to wait in memory for a
// client that is behind: past its budget it is read again from the inbox, in order, once the client
// has read its queue down (the replay's pages are paced by Drained).
void
Hub::Offer(Client &c, int64_t seq, const FrameRef &f)
{
	if (!c.IsOpen())
		return;
	size_t bytes = f->Text().size();
	if (c.gate.Replaying()) {
		// Held until the replay is written, so the client sees seq order.
		if (c.Buffered() + bytes > static_cast<size_t>(cfg.client_queue_bytes)) {
			DropHeld(c);
			return;
		}
		c.held_bytes += bytes;
		c.gate.Live(seq, f);
		return;
	}
	if (seq <= c.gate.Highest())
		return; // already sent
	if (!Fits(c, bytes)) {
		FallBehind(c);
		return;
	}
	c.gate.Take(seq);
	Enqueue(c, f);
}

void
Hub::DropHeld(Client &c)
{
	c.gate.DropHeld();
	c.held_bytes = 0;
	c.reread = true;
}

void
Hub::FallBehind(Client &c)
{
	fell_behind++;
	Log(Level::Verbose, "gateway: a client is %zu bytes behind; it reads on from the inbox after seq %lld",
	    c.Buffered(), static_cast<long long>(c.gate.Highest()));
	c.gate.BeginReplay();
	c.replay_after = c.gate.Highest();
	c.replay_run++;
	c.replay = Client::Replay::WaitingDrain;
	Drained(c);
}

// CloseTooSlow ends a client whose queue went kControlSlack over --client-queue-bytes: what it holds
// is freed now; it reconnects and resumes from the last seq it received (Socket.IO recovery,
// /ws ?since=).
void
Hub::CloseTooSlow(Client &c)
{
	Log(Level::Verbose, "gateway: closing a client that does not read (%zu bytes buffered, limit %lld + %zu)",
	    c.Buffered(), static_cast<long long>(cfg.client_queue_bytes), kControlSlack);
	clients_too_slow++;
	c.out.Clear();
	c.gate.Abandon();
	c.held_bytes = 0;
	Close(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "too slow");
	if (struct lws *wsi = c.OpenWebSocket())
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, kTooSlowGraceSeconds);
}

void
Hub::Drained(Client &c)
{
	if (c.replay == Client::Replay::WaitingDrain && c.IsOpen() &&
	    c.out.Bytes() <= static_cast<size_t>(cfg.catchup_page_bytes))
		catchup->Page(c.shared_from_this());
}

bool
Hub::MarkClosing(Client &c, int code, const std::string &reason)
{
	if (!c.IsOpen())
		return false;
	c.life = Client::Life::Closing;
	c.close_code = code;
	c.close_reason = reason.substr(0, 120); // a close reason must fit in a control frame
	return true;
}

void
Hub::Forget(Client &c)
{
	c.life = Client::Life::Closed;
	Cancel(c.expiry);
	LeaveAll(c);
	c.out.Clear();
	c.gate.Abandon();
	c.held_bytes = 0;
	c.reread = false;
	c.replay = Client::Replay::Off;
	SetAuthed(c, false);
	if (c.kind == Client::Kind::SocketIo)
		SetPending(static_cast<Session &>(c), false);
}

void
Hub::DropCurrent(struct lws *wsi, Client *c)
{
	// The caller returns -1 so lws closes wsi itself (with our close reason); don't kill it twice.
	c->ForgetWsi(wsi);
	Drop(*c);
}

void
Hub::Reject(Client &c, const char *why, int code)
{
	frames_rejected++;
	Log(Level::Verbose, "gateway: rejected a client frame (%s); closing that connection", why);
	Close(c, code, why);
}

int
Hub::Receive(struct lws *wsi, Client *client, std::string &rx, const void *in, size_t len, bool probe,
             const std::function<bool(std::string_view)> &handle)
{
	if (!client || client->IsClosed())
		return -1;
	if (client->life == Client::Life::Closing && !probe)
		return 0; // closing once its close frame can be written: what it sends now is ignored
	auto close_now = [&](int code, const std::string &reason) {
		lws_close_reason(wsi, static_cast<enum lws_close_status>(code),
		                 reinterpret_cast<unsigned char *>(const_cast<char *>(reason.data())), reason.size());
		return -1;
	};
	if (lws_frame_is_binary(wsi)) {
		frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "binary frames are not supported");
	}
	if (rx.size() + len > static_cast<size_t>(cfg.max_payload)) {
		frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message over --max-payload");
	}
	rx.append(static_cast<const char *>(in), len);
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) > 0)
		return 0;
	std::string text = std::move(rx);
	rx.clear();
	if (!eio::ValidUtf8(text)) {
		frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_INVALID_PAYLOAD, "invalid UTF-8");
	}
	if (!handle(text)) {
		frames_rejected++;
		Log(Level::Verbose, "gateway: rejected a malformed frame; closing that connection");
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_POLICY_VIOLATION, "malformed packet");
	}
	if (client->life == Client::Life::Closing && !probe) {
		if (lws_partial_buffered(wsi)) {
			// Data the kernel did not take yet goes first; the close frame follows from the
			// writeable callback (WriteQueued), or the grace timeout ends the connection.
			lws_callback_on_writable(wsi);
			return 0;
		}
		int code = client->close_code;
		std::string reason = client->close_reason;
		DropCurrent(wsi, client);
		return close_now(code, reason);
	}
	return 0;
}

int
Hub::WriteQueued(struct lws *wsi, Client *client)
{
	if (!client || client->IsClosed())
		return -1;
	if (client->life == Client::Life::Closing) {
		WriteCloseFrame(wsi, client->close_code, client->close_reason);
		DropCurrent(wsi, client);
		return -1;
	}
	if (!client->WriteControl(wsi))
		return -1;
	bool wrote = false;
	for (int i = 0; i < kFramesPerWrite && !client->out.Empty(); i++) {
		if (!WriteFrame(wsi, *client->out.Pop()))
			return -1;
		wrote = true;
		if (lws_partial_buffered(wsi))
			break; // the kernel is full; lws asked for the next writeable callback itself
	}
	if (!client->out.Empty())
		lws_callback_on_writable(wsi);
	if (wrote)
		Drained(*client);
	return 0;
}

} // namespace chat_outboxd
