// daemon/src/gateway/eio_session.cpp - Engine.IO sessions independent of their transport: the outbound
// queue, the server-driven heartbeat, the polling → WebSocket upgrade, WebSocket I/O and closing.
// Plain /ws connections share the queue, WebSocket I/O and closing code.
#include <algorithm>

#include "gateway/core/engineio.hpp"
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

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

void
KillAsync(struct lws *wsi)
{
	if (wsi)
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

// WriteCloseFrame is for a WRITEABLE callback about to return -1: lws (4.1.6) sends no close frame
// then, even after lws_close_reason(), and the client would see 1006 instead of our code.
void
WriteCloseFrame(struct lws *wsi, int code, const std::string &reason)
{
	std::string frame(LWS_PRE, '\0');
	frame.push_back(static_cast<char>((code >> 8) & 0xFF));
	frame.push_back(static_cast<char>(code & 0xFF));
	frame += reason;
	size_t n = frame.size() - LWS_PRE;
	// Opcode 4 is lws' internal LWS_WRITE_CLOSE (private in 4.1.6 headers).
	lws_write(wsi, reinterpret_cast<unsigned char *>(&frame[LWS_PRE]), n, static_cast<enum lws_write_protocol>(4));
}

} // namespace

void
Gateway::Impl::DropCurrent(struct lws *wsi, Client *client)
{
	// The caller returns -1 so lws closes wsi itself (with our close reason); don't kill it twice.
	if (client->kind == Client::Kind::Plain) {
		auto *p = static_cast<PlainClient *>(client);
		if (p->wsi == wsi)
			p->wsi = nullptr;
	} else {
		auto *s = static_cast<Session *>(client);
		if (s->ws == wsi)
			s->ws = nullptr;
	}
	DropClient(*client);
}

// A session without a namespace socket costs the daemon a slot and a heartbeat and proves nothing
// about its peer, so their number is capped in total and per address.
bool
Gateway::Impl::PendingFull(const std::string &peer) const
{
	if (pending_total >= static_cast<size_t>(cfg.max_unauthenticated))
		return true;
	auto it = pending_by_peer.find(peer);
	return it != pending_by_peer.end() && it->second >= static_cast<size_t>(cfg.max_unauthenticated_per_address);
}

// RefuseSession counts a refused handshake; the log says so once per run of refusals.
void
Gateway::Impl::RefuseSession(const std::string &peer)
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

std::shared_ptr<Session>
Gateway::Impl::NewSession(bool websocket, const std::string &peer)
{
	if (PendingFull(peer)) {
		RefuseSession(peer);
		return nullptr;
	}
	refusing_sessions = false;
	auto s = std::make_shared<Session>();
	s->sid = eio::RandomId(20);
	s->websocket = websocket;
	s->peer = peer;
	SetPending(*s, true);
	sessions[s->sid] = s;
	return s;
}

void
Gateway::Impl::SetPending(Session &s, bool pending)
{
	if (s.pending == pending)
		return;
	s.pending = pending;
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
Gateway::Impl::SetAuthed(Client &c, bool authed)
{
	if (c.authed == authed)
		return;
	c.authed = authed;
	if (authed)
		client_count++;
	else
		client_count--;
	UpdateClientGauge();
	if (c.kind == Client::Kind::SocketIo)
		SetPending(static_cast<Session &>(c), !authed && !c.closed);
}

// OpenWebSocket is the client's established WebSocket, or null (polling, probing, closing).
struct lws *
Gateway::Impl::OpenWebSocket(Client &c)
{
	if (c.kind == Client::Kind::Plain)
		return static_cast<PlainClient &>(c).wsi;
	auto &s = static_cast<Session &>(c);
	return s.websocket ? s.ws : nullptr;
}

// WriteFrame writes one text frame; false when the connection is broken. lws keeps what the kernel
// did not take and sends it first at the next writeable callback (lws_partial_buffered).
bool
Gateway::Impl::WriteFrame(struct lws *wsi, const Frame &f)
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
Gateway::Impl::Enqueue(Client &c, FrameRef f)
{
	if (c.closed || c.close_due)
		return;
	// The common case, a broadcast to sockets that keep up: one send() now, like Node's
	// socket.write(). Waiting for a writeable callback instead costs two epoll_ctl calls and a
	// loop pass per socket, 10,000 of each for one message to a big room.
	struct lws *wsi = OpenWebSocket(c);
	if (wsi && c.out.Empty() && !lws_partial_buffered(wsi)) {
		if (!WriteFrame(wsi, *f)) {
			// Broken connection: its close callback drops the client (not here: the caller may be
			// iterating the room this client is in).
			c.close_due = true;
			KillAsync(wsi);
		}
		return;
	}
	if (c.Buffered() + f->Text().size() > static_cast<size_t>(cfg.client_queue_bytes) + kControlSlack) {
		CloseTooSlow(c);
		return;
	}
	c.out.Push(std::move(f));
	Kick(c);
}

bool
Gateway::Impl::Fits(Client &c, size_t bytes)
{
	struct lws *wsi = OpenWebSocket(c);
	if (wsi && c.out.Empty() && !lws_partial_buffered(wsi))
		return true; // written at once (Enqueue)
	return c.Buffered() + bytes <= static_cast<size_t>(cfg.client_queue_bytes);
}

// Every message a client gets is in the inbox first, so no message has to wait in memory for a
// client that is behind: past its budget it is read again from the inbox, in order, once the client
// has read its queue down (the replay's pages are paced by Drained).
void
Gateway::Impl::Offer(Client &c, int64_t seq, const FrameRef &f)
{
	if (c.closed || c.close_due)
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
Gateway::Impl::DropHeld(Client &c)
{
	c.gate.DropHeld();
	c.held_bytes = 0;
	c.reread = true;
}

void
Gateway::Impl::FallBehind(Client &c)
{
	fell_behind++;
	Log(Level::Verbose, "gateway: a client is %zu bytes behind; it reads on from the inbox after seq %lld",
	    c.Buffered(), static_cast<long long>(c.gate.Highest()));
	c.gate.BeginReplay();
	c.catchup_after = c.gate.Highest();
	c.catchup_run++;
	c.catchup = Client::Catchup::WaitingDrain;
	Drained(c);
}

// CloseTooSlow ends a client whose queue went kControlSlack over --client-queue-bytes: what it holds
// is freed now; it reconnects and resumes from the last seq it received (Socket.IO recovery,
// /ws ?since=).
void
Gateway::Impl::CloseTooSlow(Client &c)
{
	Log(Level::Verbose, "gateway: closing a client that does not read (%zu bytes buffered, limit %lld + %zu)",
	    c.Buffered(), static_cast<long long>(cfg.client_queue_bytes), kControlSlack);
	clients_too_slow++;
	c.out.Clear();
	c.gate.Abandon();
	c.held_bytes = 0;
	CloseClient(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "too slow");
	if (struct lws *wsi = OpenWebSocket(c))
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, kTooSlowGraceSeconds);
}

void
Gateway::Impl::Drained(Client &c)
{
	if (c.catchup == Client::Catchup::WaitingDrain && !c.closed && !c.close_due &&
	    c.out.Bytes() <= static_cast<size_t>(cfg.catchup_page_bytes))
		CatchupPage(c.shared_from_this());
}

void
Gateway::Impl::Kick(Client &c)
{
	if (c.closed)
		return;
	if (c.kind == Client::Kind::Plain) {
		auto &p = static_cast<PlainClient &>(c);
		if (p.wsi)
			lws_callback_on_writable(p.wsi);
		return;
	}
	auto &s = static_cast<Session &>(c);
	if (s.websocket && s.ws)
		lws_callback_on_writable(s.ws);
	else if (s.held_get)
		lws_callback_on_writable(s.held_get);
}

void
Gateway::Impl::StartHeartbeat(Session &s)
{
	ScheduleIn(s.heartbeat, cfg.ping_interval);
}

void
Gateway::Impl::OnPingTimer(Session &s)
{
	if (s.closed || s.close_due)
		return;
	// A session that never joins the namespace holds a slot for nothing (the reference closes it
	// after its connectTimeout too); checked at ping time, so it ends within one ping interval.
	if (!s.authed && ++s.pings_before_connect * cfg.ping_interval >= cfg.connect_timeout) {
		Log(Level::Verbose, "gateway: session %s sent no CONNECT within %lld ms", s.sid.c_str(),
		    static_cast<long long>(cfg.connect_timeout));
		CloseClient(s, LWS_CLOSE_STATUS_POLICY_VIOLATION, "connect timeout");
		return;
	}
	EnqueueText(s, "2");
	s.awaiting_pong = true;
	ScheduleIn(s.heartbeat, cfg.ping_timeout);
}

void
Gateway::Impl::OnDeadline(Session &s)
{
	if (!s.closed && s.awaiting_pong) {
		Log(Level::Verbose, "gateway: session %s: ping timeout", s.sid.c_str());
		CloseClient(s, LWS_CLOSE_STATUS_GOINGAWAY, "ping timeout");
	}
}

// OnProbeTimeout drops a probe WebSocket that did not finish the upgrade within --upgrade-timeout
// (a client that sent "2probe" and never "5", or never even probed). The session stays on polling.
void
Gateway::Impl::OnProbeTimeout(Session &s)
{
	if (s.closed || !s.probe)
		return;
	Log(Level::Verbose, "gateway: session %s: upgrade not completed within %lld ms; dropping the probe",
	    s.sid.c_str(), static_cast<long long>(cfg.upgrade_timeout));
	DropProbe(s, true);
}

void
Gateway::Impl::DropProbe(Session &s, bool tell_client)
{
	Cancel(s.probe_timer);
	if (tell_client && s.probe) {
		// Closed with a close frame from its writeable callback (OnWebSocketWriteable sees it is no
		// longer the probe): a bare kill would leave the client waiting for lws' close timeout.
		lws_callback_on_writable(s.probe);
		lws_set_timeout(s.probe, PENDING_TIMEOUT_USER_OK, 5);
	} else {
		KillAsync(s.probe);
	}
	s.probe = nullptr;
	s.upgrading = false;
	s.probe_pong_due = false;
}

// OnTokenExpired ends a client's grant when its token runs out. A Socket.IO socket leaves its rooms
// and gets a namespace DISCONNECT ("io server disconnect"): the client library does not reconnect by
// itself with the stale token; the app refreshes it and connects again, resuming from its offset.
// The engine session may carry that new CONNECT; if none comes, --connect-timeout ends it.
// A /ws client is closed with 4401.
void
Gateway::Impl::OnTokenExpired(Client &c)
{
	if (c.closed || c.close_due)
		return;
	if (c.kind == Client::Kind::Plain) {
		CloseClient(c, kCloseUnauthorized, "token expired");
		return;
	}
	auto &s = static_cast<Session &>(c);
	EndSocket(s);
	EnqueueText(s, "41");
}

// EndSocket ends the "/" socket of a session whose engine session goes on (a DISCONNECT from the
// client, or the token's exp): out of its rooms, its token's deadline and any replay gone with it, and
// counted as unauthenticated again. A new CONNECT on the session starts afresh.
void
Gateway::Impl::EndSocket(Session &s)
{
	for (int64_t chat : s.joined)
		rooms.Leave(chat, &s);
	s.joined.clear();
	s.allowed.clear();
	Cancel(s.expiry);
	s.catchup = Client::Catchup::Off;
	s.gate.Abandon();
	s.held_bytes = 0;
	s.reread = false;
	s.socket_id.clear();
	s.pings_before_connect = 0;
	SetAuthed(s, false);
}

bool
Gateway::Impl::HandleEngineText(const std::shared_ptr<Session> &s, std::string_view text, bool via_websocket)
{
	eio::Packet p;
	if (!eio::DecodePacket(text, &p))
		return false;
	switch (p.type) {
	case eio::PacketType::Pong:
		if (!p.data.empty())
			return false;
		if (s->awaiting_pong) {
			s->awaiting_pong = false;
			StartHeartbeat(*s);
		}
		return true;
	case eio::PacketType::Message:
		return HandleSocketIo(s, p.data);
	case eio::PacketType::Close:
		// The client is leaving (polling sends "1"; over WebSocket it simply closes).
		DropClient(*s);
		return true;
	case eio::PacketType::Noop:
		return true;
	case eio::PacketType::Upgrade:
	case eio::PacketType::Ping: // v4: only the server pings (except 2probe on a probe socket)
	case eio::PacketType::Open:
		(void)via_websocket;
		return false;
	}
	return false;
}

bool
Gateway::Impl::HandleProbeText(const std::shared_ptr<Session> &s, struct lws *wsi, std::string_view text)
{
	if (text == "2probe" && !s->probe_pong_due && !s->upgrading) {
		s->probe_pong_due = true;
		s->upgrading = true;
		lws_callback_on_writable(wsi);
		// The client pauses polling now: hand back its held GET (with a noop if nothing is queued).
		if (s->held_get)
			lws_callback_on_writable(s->held_get);
		return true;
	}
	if (text == "5" && s->upgrading) {
		s->websocket = true;
		s->ws = wsi;
		s->probe = nullptr;
		s->upgrading = false;
		Cancel(s->probe_timer);
		// Anything still queued for polling now goes out on the WebSocket, in order.
		if (s->held_get) {
			KillAsync(s->held_get);
			s->held_get = nullptr;
		}
		Kick(*s);
		return true;
	}
	return false;
}

void
Gateway::Impl::Reject(Client &c, const char *why, int code)
{
	metrics.frames_rejected++;
	Log(Level::Verbose, "gateway: rejected a client frame (%s); closing that connection", why);
	CloseClient(c, code, why);
}

void
Gateway::Impl::CloseClient(Client &c, int code, const std::string &reason)
{
	if (c.closed || c.close_due)
		return;
	c.close_due = true;
	c.close_code = code;
	c.close_reason = reason.substr(0, 120); // a close reason must fit in a control frame
	if (c.kind == Client::Kind::SocketIo) {
		auto &s = static_cast<Session &>(c);
		if (s.probe)
			DropProbe(s, false);
		if (!s.websocket && !s.held_get) {
			// Nobody to tell: dropped at the next timer tick (not here, so a caller iterating a
			// room is not pulled from under), and a GET meanwhile is answered "1".
			ScheduleIn(s.heartbeat, 0);
			return;
		}
	}
	Kick(c);
}

void
Gateway::Impl::DropClient(Client &c)
{
	if (c.closed)
		return;
	c.closed = true;
	Cancel(c.expiry);
	for (int64_t chat : c.joined)
		rooms.Leave(chat, &c);
	c.joined.clear();
	c.out.Clear();
	c.gate.Abandon();
	c.held_bytes = 0;
	c.reread = false;
	c.catchup = Client::Catchup::Off;
	SetAuthed(c, false);
	if (c.kind == Client::Kind::SocketIo)
		SetPending(static_cast<Session &>(c), false);
	if (c.kind == Client::Kind::Plain) {
		auto &p = static_cast<PlainClient &>(c);
		Cancel(p.keepalive);
		KillAsync(p.wsi);
		p.wsi = nullptr;
		auto keep = plains[&p];
		plains.erase(&p);
		return;
	}
	auto &s = static_cast<Session &>(c);
	Cancel(s.heartbeat);
	Cancel(s.probe_timer);
	KillAsync(s.ws);
	KillAsync(s.probe);
	KillAsync(s.held_get);
	s.ws = s.probe = s.held_get = nullptr;
	auto it = sessions.find(s.sid);
	if (it != sessions.end()) {
		auto keep = it->second; // may be the last owner: destroy after we stop touching it
		sessions.erase(it);
	}
}

int
Gateway::Impl::OnWebSocketReceive(struct lws *wsi, Conn *c, const void *in, size_t len)
{
	Client *client = c->role == Conn::Role::Plain ? static_cast<Client *>(c->plain.get())
	                                              : static_cast<Client *>(c->session.get());
	if (!client || client->closed)
		return -1;
	bool probe = c->role == Conn::Role::SioProbe;
	if (client->close_due && !probe)
		return 0; // closing once its close frame can be written: what it sends now is ignored
	auto close_now = [&](int code, const std::string &reason) {
		lws_close_reason(wsi, static_cast<enum lws_close_status>(code),
		                 reinterpret_cast<unsigned char *>(const_cast<char *>(reason.data())), reason.size());
		return -1;
	};
	if (lws_frame_is_binary(wsi)) {
		metrics.frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "binary frames are not supported");
	}
	if (c->rx.size() + len > static_cast<size_t>(cfg.max_payload)) {
		metrics.frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message over --max-payload");
	}
	if (c->role == Conn::Role::Plain)
		c->plain->heard = true;
	c->rx.append(static_cast<const char *>(in), len);
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) > 0)
		return 0;
	std::string text = std::move(c->rx);
	c->rx.clear();
	if (!eio::ValidUtf8(text)) {
		metrics.frames_rejected++;
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_INVALID_PAYLOAD, "invalid UTF-8");
	}
	bool ok;
	if (probe)
		ok = HandleProbeText(c->session, wsi, text);
	else if (c->role == Conn::Role::Plain)
		ok = HandlePlainText(c->plain, text);
	else
		ok = HandleEngineText(c->session, text, true);
	if (probe && ok && c->session->ws == wsi)
		c->role = Conn::Role::SioWs; // the upgrade completed on this socket
	if (!ok) {
		metrics.frames_rejected++;
		Log(Level::Verbose, "gateway: rejected a malformed frame; closing that connection");
		if (!probe)
			DropCurrent(wsi, client);
		return close_now(LWS_CLOSE_STATUS_POLICY_VIOLATION, "malformed packet");
	}
	if (client->close_due && !probe) {
		if (lws_partial_buffered(wsi)) {
			// Data the kernel did not take yet goes first; the close frame follows from the
			// writeable callback (OnWebSocketWriteable), or the grace timeout ends the connection.
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
Gateway::Impl::OnWebSocketWriteable(struct lws *wsi, Conn *c)
{
	if (c->role == Conn::Role::SioProbe) {
		std::shared_ptr<Session> s = c->session;
		if (!s || s->probe != wsi) { // dropped (upgrade timeout): the session stays on polling
			WriteCloseFrame(wsi, LWS_CLOSE_STATUS_GOINGAWAY, "upgrade timeout");
			return -1;
		}
		if (s->probe_pong_due) {
			s->probe_pong_due = false;
			FrameRef f = MakeFrame("3probe");
			if (lws_write(wsi, reinterpret_cast<unsigned char *>(&f->bytes[LWS_PRE]), 6, LWS_WRITE_TEXT) < 6)
				return -1;
		}
		return 0;
	}
	Client *client = c->role == Conn::Role::Plain ? static_cast<Client *>(c->plain.get())
	                                              : static_cast<Client *>(c->session.get());
	if (!client || client->closed)
		return -1;
	if (client->close_due) {
		WriteCloseFrame(wsi, client->close_code, client->close_reason);
		DropCurrent(wsi, client);
		return -1;
	}
	if (c->role == Conn::Role::Plain && c->plain->ping_due) {
		c->plain->ping_due = false;
		// lws 4.1 swallows empty pongs without a RECEIVE_PONG callback: the ping carries a payload.
		unsigned char ping[LWS_PRE + 2] = {};
		ping[LWS_PRE] = 'k';
		ping[LWS_PRE + 1] = 'a';
		if (lws_write(wsi, ping + LWS_PRE, 2, LWS_WRITE_PING) < 2)
			return -1;
	}
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

void
Gateway::Impl::OnWebSocketClosed(struct lws *wsi, Conn *c)
{
	if (c->role == Conn::Role::SioProbe && c->session) {
		if (c->session->probe == wsi) {
			// A failed probe leaves the session on polling.
			c->session->probe = nullptr;
			c->session->upgrading = false;
			c->session->probe_pong_due = false;
			Cancel(c->session->probe_timer);
		}
	} else if (c->role == Conn::Role::SioWs && c->session) {
		if (c->session->ws == wsi) {
			c->session->ws = nullptr;
			DropClient(*c->session);
		}
	} else if (c->role == Conn::Role::Plain && c->plain) {
		c->plain->wsi = nullptr;
		DropClient(*c->plain);
	}
	c->session = nullptr;
	c->plain = nullptr;
	c->role = Conn::Role::Http;
}

} // namespace chat_outboxd
