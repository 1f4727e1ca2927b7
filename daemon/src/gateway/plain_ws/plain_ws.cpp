// daemon/src/gateway/plain_ws/plain_ws.cpp - see plain_ws.hpp.
#include "gateway/plain_ws/plain_ws.hpp"

#include <ctime>

#include "base/log.hpp"
#include "gateway/hub/catchup.hpp"
#include "gateway/send/client_sends.hpp"
#include "gateway/conversation/conversation.hpp"
#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/plain_ws/core/plain_ws_protocol.hpp"
#include "gateway/http/http_io.hpp"
#include "gateway/hub/hub.hpp"

namespace chat_outboxd {

PlainWs::PlainWs(Hub &hub, Catchup &catchup, ClientSends &sends, Conversation &conv, const Config &cfg)
    : hub_(hub), catchup_(catchup), sends_(sends), conv_(conv), cfg_(cfg)
{
}

bool
PlainWs::OnEstablished(struct lws *wsi, Conn *c)
{
	auto p = std::make_shared<PlainClient>(*this);
	p->wsi = wsi;
	plains_[p.get()] = p;
	c->role = Conn::Role::Plain;
	c->plain = p;
	p->heard = true;
	hub_.ScheduleIn(p->keepalive, cfg_.ping_interval);

	QueryArgs q = ReadQuery(wsi);
	std::string token = q.Get("token");
	if (token.empty())
		token = BearerToken(Header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION));
	std::optional<std::vector<int64_t>> requested;
	if (q.Has("chats")) {
		std::vector<int64_t> list;
		if (!ParseChatList(q.Get("chats"), &list)) {
			Close(*p, kCloseBadRequest, "chats must be comma-separated chat ids");
			return true;
		}
		requested = std::move(list);
	}
	int64_t since = -1;
	if (q.Has("since") && (!JsonInteger(q.Get("since"), &since) || since < 0)) {
		Close(*p, kCloseBadRequest, "since must be a seq");
		return true;
	}
	AuthResult ar = Authorize(token, TokenPolicy(cfg_), static_cast<int64_t>(std::time(nullptr)), requested);
	if (!ar.ok) {
		Log(Level::Verbose, "gateway: /ws client refused: %s (%s)", ar.message.c_str(), ar.reason.c_str());
		Close(*p, ar.message == "forbidden" ? kCloseForbidden : kCloseUnauthorized,
		      ar.message + ": " + ar.reason);
		return true;
	}
	MembershipView *members = hub_.Members();
	if (!members) {
		Welcome(p, ar, since);
		return true;
	}
	// --authz membership: the sub's chats first (cached per gateway, gateway/auth/membership.hpp)
	std::weak_ptr<PlainClient> weak = p;
	members->ChatsOf(ar.sub, [this, weak, ar, requested, since](bool ok, const MemberChats &chats) mutable {
		auto p = weak.lock();
		if (!p || !p->IsOpen() || p->Admitted())
			return;
		if (!ok) {
			Close(*p, LWS_CLOSE_STATUS_GOINGAWAY, "unavailable: postgres did not answer");
			return;
		}
		MemberRooms(&ar, chats, requested);
		if (!ar.ok) {
			Close(*p, kCloseForbidden, ar.message + ": " + ar.reason);
			return;
		}
		Welcome(p, ar, since);
		if (ar.chats_cut)
			conv_.Emit(*p, "chats_cut", {{"max_member_chats", cfg_.max_member_chats}});
	});
	return true;
}

void
PlainWs::Welcome(const std::shared_ptr<PlainClient> &p, const AuthResult &ar, int64_t since)
{
	p->gate = SeqGate<FrameRef>(since >= 0 ? since : 0);
	// welcome.seq is where a client that receives nothing resumes from (?since=).
	nlohmann::json welcome = {{"type", "welcome"}, {"chats", ar.rooms}};
	welcome["seq"] = since >= 0 ? since : std::max<int64_t>(hub_.HighSeq(), 0);
	hub_.EnqueueText(*p, DumpJson(welcome));
	hub_.Admit(*p, ar);
	if (since >= 0 && !p->joined.empty())
		catchup_.Start(p, since);
}

int
PlainWs::OnReceive(struct lws *wsi, Conn *c, const void *in, size_t len)
{
	std::shared_ptr<PlainClient> p = c->plain;
	if (p && p->IsOpen())
		p->heard = true;
	return hub_.Receive(wsi, p.get(), c->rx, in, len, false,
	                    [&](std::string_view text) { return HandleText(p, text); });
}

void
PlainWs::OnPong(Conn *c)
{
	if (c->plain)
		c->plain->heard = true;
}

int
PlainWs::OnWriteable(struct lws *wsi, Conn *c)
{
	return hub_.WriteQueued(wsi, c->plain.get());
}

void
PlainWs::OnClosed(struct lws *, Conn *c)
{
	if (c->plain) {
		c->plain->wsi = nullptr;
		Drop(*c->plain);
	}
	c->plain = nullptr;
	c->role = Conn::Role::Http;
}

void
PlainWs::Close(Client &c, int code, const std::string &reason)
{
	if (hub_.MarkClosing(c, code, reason))
		c.Kick();
}

void
PlainWs::Drop(Client &c)
{
	if (c.IsClosed())
		return;
	auto &p = static_cast<PlainClient &>(c);
	hub_.Forget(p);
	hub_.Cancel(p.keepalive);
	KillAsync(p.wsi);
	p.wsi = nullptr;
	auto it = plains_.find(&p);
	if (it != plains_.end()) {
		auto keep = it->second; // may be the last owner: destroyed after we stop touching it
		plains_.erase(it);
	}
}

void
PlainWs::ForEach(const std::function<void(Client &)> &fn) const
{
	for (const auto &kv : plains_)
		fn(*kv.second);
}

void
PlainWs::OnDeadline(Deadline &d)
{
	auto &p = static_cast<PlainClient &>(*d.owner);
	if (d.kind == Deadline::Kind::Keepalive) {
		OnKeepalive(p);
	} else if (d.kind == Deadline::Kind::Expiry && p.IsOpen()) {
		Close(p, kCloseUnauthorized, "token expired");
	}
}

// OnKeepalive finds dead /ws peers (no FIN ever arrives from a host that vanished): a WebSocket ping
// every --ping-interval, and a connection that stayed silent for a whole interval after one is
// closed. Browsers and WebSocket libraries answer pings by themselves.
void
PlainWs::OnKeepalive(PlainClient &p)
{
	if (!p.IsOpen())
		return;
	if (!p.heard && p.ping_sent) {
		Log(Level::Verbose, "gateway: /ws client silent for %lld ms after a ping; closing it",
		    static_cast<long long>(cfg_.ping_interval));
		Close(p, LWS_CLOSE_STATUS_GOINGAWAY, "ping timeout");
		return;
	}
	p.heard = false;
	p.ping_sent = true;
	p.ping_due = true;
	if (p.wsi)
		lws_callback_on_writable(p.wsi);
	hub_.ScheduleIn(p.keepalive, cfg_.ping_interval);
}

std::function<void(nlohmann::json)>
PlainWs::MessageAnswer(const std::shared_ptr<PlainClient> &p, nlohmann::json ref)
{
	std::weak_ptr<PlainClient> weak = p;
	return [this, weak, ref = std::move(ref)](nlohmann::json result) {
		auto live = weak.lock();
		if (!live || live->IsClosed())
			return;
		if (result.value("ok", false)) {
			nlohmann::json fields = {{"message", result["message"]}};
			if (result.value("repeat", false))
				fields["repeat"] = true;
			hub_.EnqueueText(*live, plainws::AckFrame(ref, fields));
		} else
			hub_.EnqueueText(*live, plainws::ErrorFrame(ref, result["error"]));
	};
}

bool
PlainWs::HandleText(const std::shared_ptr<PlainClient> &p, std::string_view text)
{
	if (!p->Admitted())
		return true; // refused and closing: ignore what is still in flight
	plainws::ClientFrame f;
	std::string error;
	if (!plainws::DecodeClientFrame(text, &f, &error)) {
		Log(Level::Verbose, "gateway: /ws client sent a bad frame: %s", error.c_str());
		return false;
	}
	switch (f.type) {
	case plainws::FrameType::Ping:
		hub_.EnqueueText(*p, DumpJson({{"type", "pong"}, {"ref", f.ref}}));
		return true;
	case plainws::FrameType::Join:
	case plainws::FrameType::Leave:
		if (int64_t retry_after_ms = 0; !hub_.TakeRoomChange(*p, &retry_after_ms)) {
			hub_.EnqueueText(*p, plainws::ErrorFrame(f.ref, conv::RateLimited(retry_after_ms)["error"]));
			return true;
		}
		if (f.type == plainws::FrameType::Leave) {
			hub_.AskLeave(*p, f.chat_id);
			hub_.EnqueueText(*p, plainws::AckFrame(f.ref, {{"ok", true}}));
			return true;
		}
		hub_.AskJoin(*p, f.chat_id, [this, weak = std::weak_ptr<PlainClient>(p), ref = f.ref](Hub::JoinAnswer a) {
			auto live = weak.lock();
			if (!live || live->IsClosed())
				return;
			if (a == Hub::JoinAnswer::Joined)
				hub_.EnqueueText(*live, plainws::AckFrame(ref, {{"ok", true}}));
			else
				hub_.EnqueueText(*live, plainws::ErrorFrame(ref, {{"message", Hub::JoinError(a)}}));
		});
		return true;
	case plainws::FrameType::Conversation: {
		std::weak_ptr<PlainClient> weak = p;
		nlohmann::json ref = f.ref;
		conv_.Handle(p, f.name, f.arg, [this, weak, ref](nlohmann::json result) {
			auto live = weak.lock();
			if (!live || live->IsClosed())
				return;
			if (result.value("ok", false)) {
				result.erase("ok");
				hub_.EnqueueText(*live, plainws::AckFrame(ref, result));
			} else {
				hub_.EnqueueText(*live, plainws::ErrorFrame(ref, result["error"]));
			}
		});
		return true;
	}
	case plainws::FrameType::Edit:
	case plainws::FrameType::Delete: {
		const bool edit = f.type == plainws::FrameType::Edit;
		if (auto refusal = sends_.ChangeRefusal(*p, f.message_id, edit ? &f.body : nullptr)) {
			hub_.EnqueueText(*p, plainws::ErrorFrame(f.ref, std::move(*refusal)));
			return true;
		}
		auto done = MessageAnswer(p, f.ref);
		if (edit)
			sends_.Edit(std::move(f.message_id), std::move(f.body), p->sub, std::move(done));
		else
			sends_.Delete(std::move(f.message_id), p->sub, std::move(done));
		return true;
	}
	case plainws::FrameType::Send: {
		if (auto refusal = sends_.Refusal(*p, f.chat_id, f.body, f.client_msg_id)) {
			hub_.EnqueueText(*p, plainws::ErrorFrame(f.ref, std::move(*refusal)));
			return true;
		}
		sends_.Send(f.chat_id, std::move(f.body), p->sub, MessageAnswer(p, f.ref), std::move(f.client_msg_id));
		return true;
	}
	}
	return false;
}

} // namespace chat_outboxd
