// daemon/src/gateway/engineio/sio_namespace.cpp - see sio_namespace.hpp.
#include "gateway/engineio/sio_namespace.hpp"

#include <ctime>

#include "base/log.hpp"
#include "gateway/hub/catchup.hpp"
#include "gateway/send/client_sends.hpp"
#include "gateway/conversation/conversation.hpp"
#include "gateway/engineio/core/engineio.hpp"
#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/engineio/core/recovery.hpp"
#include "gateway/engineio/core/socketio.hpp"
#include "gateway/hub/hub.hpp"

namespace chat_outboxd {

SioNamespace::SioNamespace(Hub &hub, Catchup &catchup, ClientSends &sends, Conversation &conv, const Config &cfg)
    : hub_(hub), catchup_(catchup), sends_(sends), conv_(conv), cfg_(cfg)
{
}

bool
SioNamespace::HandlePacket(const std::shared_ptr<Session> &s, std::string_view text)
{
	sio::Packet p;
	std::string error;
	if (!sio::DecodeClientPacket(text, &p, &error)) {
		Log(Level::Verbose, "gateway: session %s: bad Socket.IO packet: %s", s->sid.c_str(), error.c_str());
		return false;
	}
	switch (p.type) {
	case sio::PacketType::Connect:
		OnConnect(s, p.data, p.nsp);
		return true;
	case sio::PacketType::Disconnect:
		// The socket leaves; the client closes the transport itself once no namespace is left.
		if (p.nsp == "/" && s->Admitted())
			EndSocket(*s);
		return true;
	case sio::PacketType::Event:
		if (p.nsp == "/" && s->Admitted())
			OnEvent(s, p.data, p.ack_id);
		return true; // events for namespaces the socket is not in are ignored, like the reference
	case sio::PacketType::Ack:
		return true; // the server never asks for acks
	default:
		return false;
	}
}

void
SioNamespace::EndSocket(Session &s)
{
	hub_.LeaveAll(s);
	s.allowed.clear();
	hub_.Cancel(s.expiry);
	s.replay = Client::Replay::Off;
	s.gate.Abandon();
	s.held_bytes = 0;
	s.reread = false;
	s.socket_id.clear();
	s.pings_before_connect = 0;
	hub_.SetAuthed(s, false);
}

void
SioNamespace::OnConnect(const std::shared_ptr<Session> &s, const nlohmann::json &auth, const std::string &nsp)
{
	if (nsp != "/") {
		hub_.EnqueueText(*s, "4" + sio::EncodeConnectError(nsp, "Invalid namespace", nullptr));
		return;
	}
	if (s->Admitted())
		return; // a second CONNECT for "/" on one session changes nothing
	std::string token = s->query_token;
	std::optional<std::vector<int64_t>> requested;
	if (auth.is_object()) {
		auto t = auth.find("token");
		if (t != auth.end() && t->is_string())
			token = t->get<std::string>();
		auto chats = auth.find("chats");
		if (chats != auth.end() && !chats->is_null()) {
			std::vector<int64_t> list;
			if (!ChatListFromJson(*chats, &list)) {
				hub_.EnqueueText(*s, "4" + sio::EncodeConnectError("/", "forbidden", {{"reason", "auth.chats must be an array of chat ids"}}));
				return;
			}
			requested = std::move(list);
		}
	}
	sio::Resume resume = sio::ReadResume(auth);
	AuthResult ar = Authorize(token, TokenPolicy(cfg_), static_cast<int64_t>(std::time(nullptr)), requested);
	if (!ar.ok) {
		Log(Level::Verbose, "gateway: session %s refused: %s (%s)", s->sid.c_str(), ar.message.c_str(),
		    ar.reason.c_str());
		hub_.EnqueueText(*s, "4" + sio::EncodeConnectError("/", ar.message, {{"reason", ar.reason}}));
		return;
	}
	MembershipView *members = hub_.Members();
	if (!members) {
		AdmitSocket(s, ar, resume);
		return;
	}
	// --authz membership: the sub's chats first (cached per gateway, gateway/auth/membership.hpp)
	std::weak_ptr<Session> weak = s;
	members->ChatsOf(ar.sub, [this, weak, ar, requested, resume](bool ok, const MemberChats &chats) mutable {
		auto s = weak.lock();
		if (!s || !s->IsOpen() || s->Admitted())
			return;
		if (!ok) {
			hub_.EnqueueText(*s, "4" + sio::EncodeConnectError("/", "unavailable", {{"reason", "postgres did not answer"}}));
			return;
		}
		MemberRooms(&ar, chats, requested);
		if (!ar.ok) {
			hub_.EnqueueText(*s, "4" + sio::EncodeConnectError("/", ar.message, {{"reason", ar.reason}}));
			return;
		}
		AdmitSocket(s, ar, resume);
		if (ar.chats_cut)
			conv_.Emit(*s, "chats_cut", {{"max_member_chats", cfg_.max_member_chats}});
	});
}

void
SioNamespace::AdmitSocket(const std::shared_ptr<Session> &s, const AuthResult &ar, sio::Resume resume)
{
	s->socket_id = eio::RandomId(20);
	if (resume.pid.empty())
		resume.pid = sio::MakePid(eio::RandomId(16), hub_.HighSeq());
	s->gate = SeqGate<FrameRef>(resume.after >= 0 ? resume.after : 0);
	hub_.EnqueueText(*s, "4" + sio::EncodeConnectOk("/", s->socket_id, resume.pid));
	hub_.Admit(*s, ar);
	if (resume.after >= 0 && !s->joined.empty())
		catchup_.Start(s, resume.after);
}

void
SioNamespace::Ack(Session &s, std::optional<uint64_t> ack, nlohmann::json value)
{
	if (ack)
		hub_.EnqueueText(s, "4" + sio::EncodeAck("/", *ack, nlohmann::json::array({std::move(value)})));
}

void
SioNamespace::OnEvent(const std::shared_ptr<Session> &s, const nlohmann::json &args, std::optional<uint64_t> ack)
{
	const std::string &name = args[0].get_ref<const std::string &>();
	const nlohmann::json arg = args.size() > 1 ? args[1] : nlohmann::json();
	int64_t chat = 0;
	bool has_chat = arg.is_object() && arg.contains("chat_id") && JsonInteger(arg["chat_id"], &chat);
	int64_t retry_after_ms = 0;
	if ((name == "join" || name == "leave") && has_chat && !hub_.TakeRoomChange(*s, &retry_after_ms)) {
		Ack(*s, ack, {{"error", "rate_limited"}, {"retry_after_ms", retry_after_ms}});
		return;
	}
	if (name == "join") {
		if (!has_chat) {
			Ack(*s, ack, {{"error", "chat_id must be an integer"}});
			return;
		}
		std::weak_ptr<Session> weak = s;
		hub_.AskJoin(*s, chat, [this, weak, ack](Hub::JoinAnswer a) {
			auto live = weak.lock();
			if (!live || live->IsClosed())
				return;
			if (a == Hub::JoinAnswer::Joined)
				Ack(*live, ack, {{"ok", true}});
			else
				Ack(*live, ack, {{"error", Hub::JoinError(a)}});
		});
		return;
	}
	if (name == "leave") {
		if (!has_chat) {
			Ack(*s, ack, {{"error", "chat_id must be an integer"}});
			return;
		}
		hub_.AskLeave(*s, chat);
		Ack(*s, ack, {{"ok", true}});
		return;
	}
	if (name == "send") {
		auto body = arg.is_object() ? arg.find("body") : arg.end();
		if (!has_chat || body == arg.end() || !body->is_string()) {
			hub_.CountSend(false);
			Ack(*s, ack, {{"ok", false}, {"error", {{"message", "send needs {chat_id, body}"}}}});
			return;
		}
		// client_msg_id: optional; absent or null is a send without one
		std::optional<std::string> key;
		auto key_it = arg.find("client_msg_id");
		if (key_it != arg.end() && !key_it->is_null()) {
			if (!key_it->is_string()) {
				hub_.CountSend(false);
				Ack(*s, ack, {{"ok", false}, {"error", {{"code", "invalid_client_msg_id"}, {"message", "client_msg_id must be a string"}}}});
				return;
			}
			key = key_it->get<std::string>();
		}
		if (auto refusal = sends_.Refusal(*s, chat, body->get_ref<const std::string &>(), key)) {
			Ack(*s, ack, {{"ok", false}, {"error", std::move(*refusal)}});
			return;
		}
		std::weak_ptr<Session> weak = s;
		sends_.Send(
		    chat, body->get<std::string>(), s->sub,
		    [this, weak, ack](nlohmann::json result) {
			auto live = weak.lock();
			if (live && !live->IsClosed())
				Ack(*live, ack, std::move(result));
		    },
		    std::move(key));
		return;
	}
	std::weak_ptr<Session> weak = s;
	auto reply = [this, weak, ack](nlohmann::json result) {
		auto live = weak.lock();
		if (live && !live->IsClosed())
			Ack(*live, ack, std::move(result));
	};
	if (name == "edit" || name == "delete") {
		const bool edit = name == "edit";
		auto id = arg.is_object() ? arg.find("message_id") : arg.end();
		auto body = arg.is_object() ? arg.find("body") : arg.end();
		if (id == arg.end() || !id->is_string() || (edit && (body == arg.end() || !body->is_string()))) {
			hub_.CountSend(false);
			Ack(*s, ack, {{"ok", false}, {"error", {{"message", edit ? "edit needs {message_id, body}" : "delete needs {message_id}"}}}});
			return;
		}
		const std::string &body_text = edit ? body->get_ref<const std::string &>() : std::string();
		if (auto refusal = sends_.ChangeRefusal(*s, id->get_ref<const std::string &>(), edit ? &body_text : nullptr)) {
			Ack(*s, ack, {{"ok", false}, {"error", std::move(*refusal)}});
			return;
		}
		if (edit)
			sends_.Edit(id->get<std::string>(), body_text, s->sub, reply);
		else
			sends_.Delete(id->get<std::string>(), s->sub, reply);
		return;
	}
	if (!conv_.Handle(s, name, arg, reply))
		Ack(*s, ack, {{"error", "unknown event"}});
}

} // namespace chat_outboxd
