// daemon/src/gateway/conversation/presence.cpp - see presence.hpp.
#include "gateway/conversation/presence.hpp"

#include <map>

#include "base/wall_clock.hpp"
#include "gateway/conversation/core/chat_keys.hpp"
#include "gateway/hub/hub.hpp"
#include "net/redis_conn.hpp"
#include "common/redis_script.hpp"

namespace chat_outboxd {

namespace {

// KEYS[1] the chat's members (sorted set, score = expiry), KEYS[2] its users (hash "<service>\t<sub>"
// -> "<members>\t<one of their members>"). ARGV: now (ms), expiry (ms), op (add, rem or none), member,
// channel, service, keys' ttl (ms). Drops expired members and applies op, keeping each user's count of
// members; a user whose count goes from 0 to 1 or back is published, naming one of their members.
// Every step costs O(1) per member changed, whatever the chat's size; returns the users' values.
const chat_outbox::RedisScript &
PresenceScript()
{
	static const chat_outbox::RedisScript s = chat_outbox::MakeRedisScript("chat presence", R"lua(
local head = '{"event":"presence","service":' .. cjson.encode(ARGV[6]) .. ',"data":{"member":'
local function user_of(m)
  local a = string.find(m, '\t', 1, true)
  local b = a and string.find(m, '\t', a + 1, true)
  if b then return string.sub(m, 1, b - 1) end
end
local function count(m, d)
  local u = user_of(m)
  if not u then return end
  local v = redis.call('HGET', KEYS[2], u)
  local n = (v and tonumber(string.match(v, '^(%d+)')) or 0) + d
  if n <= 0 then
    redis.call('HDEL', KEYS[2], u)
    if v then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":false}}') end
  else
    redis.call('HSET', KEYS[2], u, n .. '\t' .. m)
    if n == 1 and d > 0 then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":true}}') end
  end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])) do
  redis.call('ZREM', KEYS[1], m)
  count(m, -1)
end
if ARGV[3] == 'add' then
  if redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4]) == 1 then count(ARGV[4], 1) end
elseif ARGV[3] == 'rem' then
  if redis.call('ZREM', KEYS[1], ARGV[4]) == 1 then count(ARGV[4], -1) end
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return redis.call('HVALS', KEYS[2])
)lua");
	return s;
}

// Members reads the script's answer: one "<count>\t<member>" per present user.
std::vector<std::string>
Members(const RedisValue *reply)
{
	std::vector<std::string> out;
	if (reply && reply->IsArray())
		for (const RedisValue &v : reply->elements) {
			size_t tab = v.str.find('\t');
			if (tab != std::string::npos)
				out.push_back(v.str.substr(tab + 1));
		}
	return out;
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
			Change(chat, "add", m, nullptr);
}

void
Presence::Change(int64_t chat, const std::string &op, const std::string &member,
                 std::function<void(const RedisValue *reply)> done)
{
	int64_t now = WallMs();
	chat_outbox::ScriptCall call{&PresenceScript(), {ChatPresenceKey(ctx_.cfg.prefix, chat), ChatPresenceUsersKey(ctx_.cfg.prefix, chat)},
	                             {std::to_string(now), std::to_string(now + ctx_.cfg.presence_ttl), op.empty() ? "none" : op, member,
	                              ChatEventsChannel(ctx_.cfg.prefix, chat), ctx_.cfg.service, KeysTtlMs()}};
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	ctx_.redis.Eval(call, [alive, done = std::move(done)](const RedisValue *reply, const std::string &) {
		auto a = alive.lock();
		if (a && *a && done)
			done(reply && !reply->IsError() ? reply : nullptr);
	});
	if (!timer_.Active())
		timer_.Start(RefreshMs(), [this] { Refresh(); }, RefreshMs());
}

void
Presence::Joined(Client &c, int64_t chat, std::function<void(nlohmann::json users)> done)
{
	std::string member = Conversation::Identified(c) ? conv::PresenceMember(ctx_.conv.User(c), instance_, c.serial) : "";
	Change(chat, member.empty() ? "" : "add", member, [done = std::move(done)](const RedisValue *reply) {
		done(conv::PresenceUsers(Members(reply)));
	});
}

void
Presence::Left(Client &c, int64_t chat)
{
	if (Conversation::Identified(c))
		Change(chat, "rem", conv::PresenceMember(ctx_.conv.User(c), instance_, c.serial), nullptr);
}

void
Presence::List(int64_t chat, const Conversation::Reply &reply)
{
	Change(chat, "", "", [chat, reply](const RedisValue *r) {
		if (!r)
			return reply(conv::Error("unavailable", "Redis did not answer; retry"));
		reply({{"ok", true}, {"chat_id", chat}, {"users", conv::PresenceUsers(Members(r))}});
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
		std::vector<std::string> argv = {"ZADD", ChatPresenceKey(ctx_.cfg.prefix, chat), "XX"};
		for (std::string &m : members) {
			argv.push_back(expiry);
			argv.push_back(std::move(m));
		}
		ctx_.redis.Command(std::move(argv), [](const RedisValue *, const std::string &) {});
		for (const std::string &key : {ChatPresenceKey(ctx_.cfg.prefix, chat), ChatPresenceUsersKey(ctx_.cfg.prefix, chat)})
			ctx_.redis.Command({"PEXPIRE", key, KeysTtlMs()}, [](const RedisValue *, const std::string &) {});
	}
}

void
Presence::Stop()
{
	timer_.Close();
}

} // namespace chat_outboxd
