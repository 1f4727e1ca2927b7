// daemon/src/gateway/engineio/engine_io.cpp - Engine.IO sessions independent of their transport (the
// heartbeat, the upgrade, closing) and the WebSocket transport. See engine_io.hpp.
#include "gateway/engineio/engine_io.hpp"

#include "base/log.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/engineio/sio_namespace.hpp"

namespace chat_outboxd {

EngineIo::EngineIo(Hub &hub, SioNamespace &sio, const HttpWriter &http, const Config &cfg)
    : hub_(hub), sio_(sio), http_(http), cfg_(cfg)
{
}

std::shared_ptr<Session>
EngineIo::NewSession(Session::Transport transport, const std::string &peer)
{
	if (hub_.PendingFull(peer)) {
		hub_.RefuseSession(peer);
		return nullptr;
	}
	hub_.SessionAccepted();
	auto s = std::make_shared<Session>(*this, transport);
	s->sid = eio::RandomId(20);
	s->peer = peer;
	hub_.SetPending(*s, true);
	sessions_[s->sid] = s;
	return s;
}

std::shared_ptr<Session>
EngineIo::FindSession(const std::string &sid) const
{
	auto it = sessions_.find(sid);
	return it == sessions_.end() ? nullptr : it->second;
}

void
EngineIo::ForEach(const std::function<void(Client &)> &fn) const
{
	for (const auto &kv : sessions_)
		fn(*kv.second);
}

bool
EngineIo::AdmitWebSocket(const std::string &peer)
{
	if (hub_.PendingFull(peer)) {
		hub_.RefuseSession(peer);
		return false;
	}
	return true;
}

bool
EngineIo::CanProbe(const std::string &sid) const
{
	std::shared_ptr<Session> s = FindSession(sid);
	return s && !s->IsClosed() && s->transport == Session::Transport::Polling;
}

bool
EngineIo::OnWebSocketEstablished(struct lws *wsi, Conn *c, const QueryArgs &q, const std::string &peer)
{
	std::string sid = q.Get("sid");
	if (sid.empty()) {
		auto s = NewSession(Session::Transport::WebSocket, peer);
		if (!s)
			return false;
		s->ws = wsi;
		s->query_token = q.Get("token");
		c->role = Conn::Role::SioWs;
		c->session = s;
		hub_.EnqueueText(*s, eio::OpenPacket(s->sid, false, cfg_.ping_interval, cfg_.ping_timeout, cfg_.max_payload));
		StartHeartbeat(*s);
		return true;
	}
	if (!CanProbe(sid))
		return false;
	std::shared_ptr<Session> s = FindSession(sid);
	s->probe = wsi;
	s->transport = Session::Transport::Probing;
	c->role = Conn::Role::SioProbe;
	c->session = s;
	hub_.ScheduleIn(s->probe_timer, cfg_.upgrade_timeout);
	return true;
}

void
EngineIo::StartHeartbeat(Session &s)
{
	hub_.ScheduleIn(s.heartbeat, cfg_.ping_interval);
}

void
EngineIo::OnDeadline(Deadline &d)
{
	auto &s = static_cast<Session &>(*d.owner);
	switch (d.kind) {
	case Deadline::Kind::Heartbeat:
		if (s.life == Client::Life::Closing && s.transport != Session::Transport::WebSocket && !s.held_get)
			Drop(s); // Close found nobody to tell
		else if (s.beat == Session::Beat::AwaitingPong)
			OnPongDeadline(s);
		else
			OnPingTimer(s);
		return;
	case Deadline::Kind::Expiry:
		OnTokenExpired(s);
		return;
	case Deadline::Kind::Probe:
		OnProbeTimeout(s);
		return;
	case Deadline::Kind::Keepalive:
		return;
	}
}

void
EngineIo::OnPingTimer(Session &s)
{
	if (!s.IsOpen())
		return;
	// A session that never joins the namespace holds a slot for nothing (the reference closes it
	// after its connectTimeout too); checked at ping time, so it ends within one ping interval.
	if (!s.Admitted() && ++s.pings_before_connect * cfg_.ping_interval >= cfg_.connect_timeout) {
		Log(Level::Verbose, "gateway: session %s sent no CONNECT within %lld ms", s.sid.c_str(),
		    static_cast<long long>(cfg_.connect_timeout));
		Close(s, LWS_CLOSE_STATUS_POLICY_VIOLATION, "connect timeout");
		return;
	}
	hub_.EnqueueText(s, "2");
	s.beat = Session::Beat::AwaitingPong;
	hub_.ScheduleIn(s.heartbeat, cfg_.ping_timeout);
}

void
EngineIo::OnPongDeadline(Session &s)
{
	if (!s.IsClosed() && s.beat == Session::Beat::AwaitingPong) {
		Log(Level::Verbose, "gateway: session %s: ping timeout", s.sid.c_str());
		Close(s, LWS_CLOSE_STATUS_GOINGAWAY, "ping timeout");
	}
}

// OnProbeTimeout drops a probe WebSocket that did not finish the upgrade within --upgrade-timeout
// (a client that sent "2probe" and never "5", or never even probed). The session stays on polling.
void
EngineIo::OnProbeTimeout(Session &s)
{
	if (s.IsClosed() || !s.probe)
		return;
	Log(Level::Verbose, "gateway: session %s: upgrade not completed within %lld ms; dropping the probe",
	    s.sid.c_str(), static_cast<long long>(cfg_.upgrade_timeout));
	DropProbe(s, true);
}

void
EngineIo::DropProbe(Session &s, bool tell_client)
{
	if (tell_client && s.probe) {
		// Closed with a close frame from its writeable callback (OnWebSocketWriteable sees it is no
		// longer the probe): a bare kill would leave the client waiting for lws' close timeout.
		lws_callback_on_writable(s.probe);
		lws_set_timeout(s.probe, PENDING_TIMEOUT_USER_OK, 5);
	} else {
		KillAsync(s.probe);
	}
	ForgetProbe(s);
}

void
EngineIo::ForgetProbe(Session &s)
{
	hub_.Cancel(s.probe_timer);
	s.probe = nullptr;
	s.transport = Session::Transport::Polling;
	s.probe_pong_due = false;
}

// OnTokenExpired ends a session's grant when its token runs out: the socket leaves its rooms and gets
// a namespace DISCONNECT ("io server disconnect"), so the client library does not reconnect by itself
// with the stale token; the app refreshes it and connects again, resuming from its offset. The engine
// session may carry that new CONNECT; if none comes, --connect-timeout ends it.
void
EngineIo::OnTokenExpired(Session &s)
{
	if (!s.IsOpen())
		return;
	sio_.EndSocket(s);
	hub_.EnqueueText(s, "41");
}

bool
EngineIo::HandleEngineText(const std::shared_ptr<Session> &s, std::string_view text)
{
	eio::Packet p;
	if (!eio::DecodePacket(text, &p))
		return false;
	switch (p.type) {
	case eio::PacketType::Pong:
		if (!p.data.empty())
			return false;
		if (s->beat == Session::Beat::AwaitingPong) {
			s->beat = Session::Beat::NextPing;
			StartHeartbeat(*s);
		}
		return true;
	case eio::PacketType::Message:
		return sio_.HandlePacket(s, p.data);
	case eio::PacketType::Close:
		// The client is leaving (polling sends "1"; over WebSocket it simply closes).
		Drop(*s);
		return true;
	case eio::PacketType::Noop:
		return true;
	case eio::PacketType::Upgrade:
	case eio::PacketType::Ping: // v4: only the server pings (except 2probe on a probe socket)
	case eio::PacketType::Open:
		return false;
	}
	return false;
}

bool
EngineIo::HandleProbeText(const std::shared_ptr<Session> &s, struct lws *wsi, std::string_view text)
{
	if (s->probe != wsi)
		return true; // a dropped probe: closed from its writeable callback, what it still sends is ignored
	switch (eio::OnProbeText(s->transport, text)) {
	case eio::ProbeStep::Answer:
		s->probe_pong_due = true;
		s->transport = Session::Transport::Upgrading;
		lws_callback_on_writable(wsi);
		// The client pauses polling now: hand back its held GET (with a noop if nothing is queued).
		if (s->held_get)
			lws_callback_on_writable(s->held_get);
		return true;
	case eio::ProbeStep::Complete:
		s->transport = Session::Transport::WebSocket;
		s->ws = wsi;
		s->probe = nullptr;
		hub_.Cancel(s->probe_timer);
		// Anything still queued for polling now goes out on the WebSocket, in order.
		if (s->held_get) {
			KillAsync(s->held_get);
			s->held_get = nullptr;
		}
		s->Kick();
		return true;
	case eio::ProbeStep::Fault:
		break;
	}
	return false;
}

void
EngineIo::Close(Client &c, int code, const std::string &reason)
{
	if (!hub_.MarkClosing(c, code, reason))
		return;
	auto &s = static_cast<Session &>(c);
	if (s.probe)
		DropProbe(s, false);
	if (s.transport != Session::Transport::WebSocket && !s.held_get) {
		// Nobody to tell: dropped at the next deadline tick (not here, so a caller iterating a room
		// is not pulled from under), and a GET meanwhile is answered "1".
		hub_.ScheduleIn(s.heartbeat, 0);
		return;
	}
	s.Kick();
}

void
EngineIo::Drop(Client &c)
{
	if (c.IsClosed())
		return;
	auto &s = static_cast<Session &>(c);
	hub_.Forget(s);
	hub_.Cancel(s.heartbeat);
	hub_.Cancel(s.probe_timer);
	KillAsync(s.ws);
	KillAsync(s.probe);
	KillAsync(s.held_get);
	s.ws = s.probe = s.held_get = nullptr;
	auto it = sessions_.find(s.sid);
	if (it != sessions_.end()) {
		auto keep = it->second; // may be the last owner: destroyed after we stop touching it
		sessions_.erase(it);
	}
}

int
EngineIo::OnWebSocketReceive(struct lws *wsi, Conn *c, const void *in, size_t len)
{
	bool probe = c->role == Conn::Role::SioProbe;
	std::shared_ptr<Session> s = c->session;
	return hub_.Receive(wsi, s.get(), c->rx, in, len, probe, [&](std::string_view text) {
		if (!probe)
			return HandleEngineText(s, text);
		bool ok = HandleProbeText(s, wsi, text);
		if (ok && s->ws == wsi)
			c->role = Conn::Role::SioWs; // the upgrade completed on this socket
		return ok;
	});
}

int
EngineIo::OnWebSocketWriteable(struct lws *wsi, Conn *c)
{
	if (c->role != Conn::Role::SioProbe)
		return hub_.WriteQueued(wsi, c->session.get());
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

void
EngineIo::OnWebSocketClosed(struct lws *wsi, Conn *c)
{
	if (c->role == Conn::Role::SioProbe && c->session) {
		if (c->session->probe == wsi)
			ForgetProbe(*c->session); // a failed probe leaves the session on polling
	} else if (c->role == Conn::Role::SioWs && c->session) {
		if (c->session->ws == wsi) {
			c->session->ws = nullptr;
			Drop(*c->session);
		}
	}
	c->session = nullptr;
	c->role = Conn::Role::Http;
}

} // namespace chat_outboxd
