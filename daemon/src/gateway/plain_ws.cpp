// daemon/src/gateway/plain_ws.cpp - the plain JSON WebSocket endpoint /ws for clients without Socket.IO:
// token from ?token= or "Authorization: Bearer", rooms from the token or ?chats=, catch-up from
// ?since=, and send/join/leave/ping frames (core/plain_ws_protocol.hpp).
#include <ctime>

#include "gateway/core/gateway_auth.hpp"
#include "gateway/core/message_json.hpp"
#include "gateway/core/plain_ws_protocol.hpp"
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

bool
Gateway::Impl::OnPlainEstablished(struct lws *wsi, Conn *c)
{
	auto p = std::make_shared<PlainClient>();
	p->wsi = wsi;
	plains[p.get()] = p;
	c->role = Conn::Role::Plain;
	c->plain = p;
	p->heard = true;
	ScheduleIn(p->keepalive, cfg.ping_interval);

	QueryArgs q = ReadQuery(wsi);
	std::string token = q.Get("token");
	if (token.empty())
		token = BearerToken(Header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION));
	std::optional<std::vector<int64_t>> requested;
	if (q.Has("chats")) {
		std::vector<int64_t> list;
		if (!ParseChatList(q.Get("chats"), &list)) {
			CloseClient(*p, kCloseBadRequest, "chats must be comma-separated chat ids");
			return true;
		}
		requested = std::move(list);
	}
	int64_t since = -1;
	if (q.Has("since") && (!JsonInteger(q.Get("since"), &since) || since < 0)) {
		CloseClient(*p, kCloseBadRequest, "since must be a seq");
		return true;
	}
	AuthResult ar = Authorize(token, TokenPolicy(cfg), static_cast<int64_t>(std::time(nullptr)), requested);
	if (!ar.ok) {
		Log(Level::Verbose, "gateway: /ws client refused: %s (%s)", ar.message.c_str(), ar.reason.c_str());
		CloseClient(*p, ar.message == "forbidden" ? kCloseForbidden : kCloseUnauthorized,
		            ar.message + ": " + ar.reason);
		return true;
	}
	p->gate = SeqGate<FrameRef>(since >= 0 ? since : 0);
	// welcome.seq is where a client that receives nothing resumes from (?since=).
	nlohmann::json welcome = {{"type", "welcome"}, {"chats", ar.rooms}};
	welcome["seq"] = since >= 0 ? since : std::max<int64_t>(high_seq, 0);
	EnqueueText(*p, DumpJson(welcome));
	Admit(*p, ar);
	if (since >= 0 && !p->joined.empty())
		StartCatchup(p, since);
	return true;
}

// OnKeepalive finds dead /ws peers (no FIN ever arrives from a host that vanished): a WebSocket ping
// every --ping-interval, and a connection that stayed silent for a whole interval after one is
// closed. Browsers and WebSocket libraries answer pings by themselves.
void
Gateway::Impl::OnKeepalive(PlainClient &p)
{
	if (p.closed || p.close_due)
		return;
	if (!p.heard && p.ping_sent) {
		Log(Level::Verbose, "gateway: /ws client silent for %lld ms after a ping; closing it",
		    static_cast<long long>(cfg.ping_interval));
		CloseClient(p, LWS_CLOSE_STATUS_GOINGAWAY, "ping timeout");
		return;
	}
	p.heard = false;
	p.ping_sent = true;
	p.ping_due = true;
	if (p.wsi)
		lws_callback_on_writable(p.wsi);
	ScheduleIn(p.keepalive, cfg.ping_interval);
}

bool
Gateway::Impl::HandlePlainText(const std::shared_ptr<PlainClient> &p, std::string_view text)
{
	if (!p->authed)
		return true; // refused and closing: ignore what is still in flight
	plainws::ClientFrame f;
	std::string error;
	if (!plainws::DecodeClientFrame(text, &f, &error)) {
		Log(Level::Verbose, "gateway: /ws client sent a bad frame: %s", error.c_str());
		return false;
	}
	switch (f.type) {
	case plainws::FrameType::Ping:
		EnqueueText(*p, DumpJson({{"type", "pong"}, {"ref", f.ref}}));
		return true;
	case plainws::FrameType::Join:
		if (Join(*p, f.chat_id))
			EnqueueText(*p, plainws::AckFrame(f.ref, {{"ok", true}}));
		else
			EnqueueText(*p, plainws::ErrorFrame(f.ref, {{"message", "forbidden"}}));
		return true;
	case plainws::FrameType::Leave:
		Leave(*p, f.chat_id);
		EnqueueText(*p, plainws::AckFrame(f.ref, {{"ok", true}}));
		return true;
	case plainws::FrameType::Send: {
		if (auto refusal = SendRefusal(*p, f.chat_id, f.body)) {
			EnqueueText(*p, plainws::ErrorFrame(f.ref, std::move(*refusal)));
			return true;
		}
		std::weak_ptr<PlainClient> weak = p;
		nlohmann::json ref = f.ref;
		ClientSend(f.chat_id, std::move(f.body), [this, weak, ref](nlohmann::json result) {
			auto live = weak.lock();
			if (!live || live->closed)
				return;
			if (result.value("ok", false))
				EnqueueText(*live, plainws::AckFrame(ref, {{"message", result["message"]}}));
			else
				EnqueueText(*live, plainws::ErrorFrame(ref, result["error"]));
		});
		return true;
	}
	}
	return false;
}

} // namespace chat_outboxd
