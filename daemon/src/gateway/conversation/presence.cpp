// daemon/src/gateway/conversation/presence.cpp - see presence.hpp.
#include "gateway/conversation/presence.hpp"

#include <map>

#include "base/wall_clock.hpp"
#include "gateway/conversation/core/chat_keys.hpp"
#include "gateway/hub/hub.hpp"
#include "net/redis_conn.hpp"
#include "common/redis_script.hpp"
#include "gateway/conversation/lua/scripts.hpp" // built from gateway/conversation/lua/*.lua

namespace chat_outboxd {

namespace {

// PresenceScript is lua/chat_presence.lua (its KEYS, ARGV and rules in its head).
const chat_outbox::RedisScript &
PresenceScript()
{
	static const chat_outbox::RedisScript s = chat_outbox::MakeRedisScript("chat presence", gateway_lua::kChatPresence);
	return s;
}

// ReadPage reads the script's answer: {online, next, "<count>\t<member>" per user of the page}.
bool
ReadPage(const RedisValue *reply, Presence::Page *out)
{
	if (!reply || !reply->IsArray() || reply->elements.size() < 2)
		return false;
	out->online = reply->elements[0].integer;
	out->next = reply->elements[1].str;
	std::vector<std::string> members;
	for (size_t i = 2; i < reply->elements.size(); i++) {
		const std::string &v = reply->elements[i].str;
		size_t tab = v.find('\t');
		if (tab != std::string::npos)
			members.push_back(v.substr(tab + 1));
	}
	out->users = conv::PresenceUsers(members);
	return true;
}

} // namespace

Presence::Presence(ConvContext &ctx)
    : ctx_(ctx), instance_(ctx.cfg.identity + "@" + std::to_string(WallMs())), timer_(ctx.loop, "presence refresh")
{
	ctx_.redis.OnReady([this, alive = ctx_.conv.Alive()] {
		if (auto a = alive.lock(); a && *a)
			Resync();
	});
}

std::map<int64_t, std::vector<std::string>>
Presence::LocalMembers() const
{
	std::map<int64_t, std::vector<std::string>> by_chat;
	for (const auto &c : ctx_.hub.AllClients()) {
		if (!c->IsOpen() || !c->Admitted() || !Conversation::Identified(*c))
			continue;
		for (int64_t chat : c->joined)
			by_chat[chat].push_back(conv::PresenceMember(ctx_.conv.User(*c), instance_, c->serial));
	}
	return by_chat;
}

void
Presence::Resync()
{
	for (auto &[chat, members] : LocalMembers())
		for (const std::string &m : members)
			Change(chat, "add", m, 0, "", nullptr);
}

void
Presence::Change(int64_t chat, const std::string &op, const std::string &member, int64_t page, const std::string &after,
                 std::function<void(const RedisValue *reply)> done)
{
	int64_t now = WallMs();
	chat_outbox::ScriptCall call{&PresenceScript(), {ChatPresenceKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), ChatPresenceUsersKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), ChatPresenceIndexKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)}, {std::to_string(now), std::to_string(now + ctx_.cfg.presence_ttl), op.empty() ? "none" : op, member, ChatEventsChannel({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), ctx_.cfg.service, KeysTtlMs(), std::to_string(page), after}};
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	ctx_.redis.Eval(call, [alive, done = std::move(done)](const RedisValue *reply, const std::string &) {
		auto a = alive.lock();
		if (a && *a && done)
			done(reply && !reply->IsError() ? reply : nullptr);
	});
	if (!timer_.Active())
		timer_.Start(
		    RefreshMs(), [this] { Refresh(); }, RefreshMs());
}

void
Presence::Joined(Client &c, int64_t chat, std::function<void(int64_t online)> done)
{
	std::string member = Conversation::Identified(c) ? conv::PresenceMember(ctx_.conv.User(c), instance_, c.serial) : "";
	Change(chat, member.empty() ? "" : "add", member, 0, "", [done = std::move(done)](const RedisValue *reply) {
		Page p;
		done(ReadPage(reply, &p) ? p.online : -1);
	});
}

void
Presence::Left(Client &c, int64_t chat)
{
	if (Conversation::Identified(c))
		Change(chat, "rem", conv::PresenceMember(ctx_.conv.User(c), instance_, c.serial), 0, "", nullptr);
}

void
Presence::Read(int64_t chat, const std::string &after, int64_t limit, std::function<void(const Page *)> done)
{
	Change(chat, "", "", limit, after, [done = std::move(done)](const RedisValue *reply) {
		Page p;
		done(ReadPage(reply, &p) ? &p : nullptr);
	});
}

void
Presence::List(const conv::PresenceRequest &req, const Conversation::Reply &reply)
{
	Read(req.chat_id, req.after, req.limit, [chat = req.chat_id, reply](const Page *p) {
		if (!p)
			return reply(conv::Error("unavailable", "Redis did not answer; retry"));
		reply({{"ok", true}, {"chat_id", chat}, {"online", p->online}, {"users", p->users}, {"next", p->next.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->next)}});
	});
}

// Refresh renews this gateway's members: one ZADD XX per chat with every local present client (a
// member Redis lost comes back through Resync, which counts it).
void
Presence::Refresh()
{
	auto by_chat = LocalMembers();
	if (by_chat.empty()) {
		timer_.Stop();
		return;
	}
	std::string expiry = std::to_string(WallMs() + ctx_.cfg.presence_ttl);
	for (auto &[chat, members] : by_chat) {
		std::vector<std::string> argv = {"ZADD", ChatPresenceKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), "XX"};
		for (std::string &m : members) {
			argv.push_back(expiry);
			argv.push_back(std::move(m));
		}
		ctx_.redis.Command(std::move(argv), [](const RedisValue *, const std::string &) {});
		for (const std::string &key : {ChatPresenceKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), ChatPresenceUsersKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat), ChatPresenceIndexKey({ctx_.cfg.prefix, ctx_.cfg.redis_cluster}, chat)})
			ctx_.redis.Command({"PEXPIRE", key, KeysTtlMs()}, [](const RedisValue *, const std::string &) {});
	}
}

void
Presence::Stop()
{
	timer_.Close();
}

} // namespace chat_outboxd
