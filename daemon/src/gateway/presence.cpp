// daemon/src/gateway/presence.cpp - see presence.hpp.
#include "gateway/presence.hpp"

#include <map>

#include "base/wall_clock.hpp"
#include "gateway/core/chat_keys.hpp"
#include "gateway/hub.hpp"
#include "net/redis_conn.hpp"
#include "redis_script.hpp"

namespace chat_outboxd {

namespace {

// KEYS[1] the chat's presence set. ARGV: now (ms), expiry (ms), op (add, rem or none), member,
// channel, service, key ttl (ms). Drops expired members and applies op; for every user (service and
// sub, the members' first two fields) who appeared or disappeared with that, publishes one presence
// event naming one of their members; returns the members left.
const chat_outbox::RedisScript &
PresenceScript()
{
	static const chat_outbox::RedisScript s = chat_outbox::MakeRedisScript("chat presence", R"lua(
local function users(members)
  local u = {}
  for _, m in ipairs(members) do
    local a = string.find(m, '\t', 1, true)
    local b = a and string.find(m, '\t', a + 1, true)
    if b then u[string.sub(m, 1, b - 1)] = m end
  end
  return u
end
local before = users(redis.call('ZRANGE', KEYS[1], 0, -1))
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
if ARGV[3] == 'add' then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
elseif ARGV[3] == 'rem' then
  redis.call('ZREM', KEYS[1], ARGV[4])
end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
if #members == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
end
local after = users(members)
local head = '{"event":"presence","service":' .. cjson.encode(ARGV[6]) .. ',"data":{"member":'
for k, m in pairs(after) do
  if not before[k] then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":true}}') end
end
for k, m in pairs(before) do
  if not after[k] then redis.call('PUBLISH', ARGV[5], head .. cjson.encode(m) .. ',"present":false}}') end
end
return members
)lua");
	return s;
}

std::vector<std::string>
Members(const RedisValue *reply)
{
	std::vector<std::string> out;
	if (reply && reply->IsArray())
		for (const RedisValue &v : reply->elements)
			out.push_back(v.str);
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
	chat_outbox::ScriptCall call{&PresenceScript(), {ChatPresenceKey(ctx_.cfg.prefix, chat)},
	                             {std::to_string(now), std::to_string(now + kTtlMs), op.empty() ? "none" : op, member,
	                              ChatEventsChannel(ctx_.cfg.prefix, chat), ctx_.cfg.service, std::to_string(2 * kTtlMs)}};
	std::weak_ptr<bool> alive = ctx_.conv.Alive();
	ctx_.redis.Eval(call, [alive, done = std::move(done)](const RedisValue *reply, const std::string &) {
		auto a = alive.lock();
		if (a && *a && done)
			done(reply && !reply->IsError() ? reply : nullptr);
	});
	if (!timer_.Active())
		timer_.Start(kRefreshMs, [this] { Refresh(); }, kRefreshMs);
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

// Refresh renews this gateway's members: one ZADD per chat with every local present client.
void
Presence::Refresh()
{
	auto by_chat = LocalMembers();
	if (by_chat.empty()) {
		timer_.Stop();
		return;
	}
	std::string expiry = std::to_string(WallMs() + kTtlMs);
	for (auto &[chat, members] : by_chat) {
		std::vector<std::string> argv = {"ZADD", ChatPresenceKey(ctx_.cfg.prefix, chat)};
		for (std::string &m : members) {
			argv.push_back(expiry);
			argv.push_back(std::move(m));
		}
		ctx_.redis.Command(std::move(argv), [](const RedisValue *, const std::string &) {});
		ctx_.redis.Command({"PEXPIRE", ChatPresenceKey(ctx_.cfg.prefix, chat), std::to_string(2 * kTtlMs)},
		                   [](const RedisValue *, const std::string &) {});
	}
}

void
Presence::Stop()
{
	timer_.Close();
}

} // namespace chat_outboxd
