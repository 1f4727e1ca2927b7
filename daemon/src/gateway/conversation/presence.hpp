// daemon/src/gateway/conversation/presence.hpp - presence: one member per present client in the chat's sorted set
// in Redis (score = expiry, --presence-ttl ahead, renewed every third of it), changed and published
// atomically by one script, so every gateway of every service shows the same list and a killed
// gateway's clients expire. The chat's keys expire twice the ttl after their last change or renewal.
// Nothing here costs O(users of the chat): a change is O(log n) in Redis, a list is read a page at a time
// (docs/client-protocol.md "Presence").
#pragma once

#include <map>
#include <memory>
#include <vector>
#include <string>

#include "base/uv_timer.hpp"
#include "gateway/conversation/conversation.hpp"
#include "net/core/redis_value.hpp"

namespace chat_outboxd {

class Presence {
  public:
	explicit Presence(ConvContext &ctx);
	// A page of a chat's users, sorted by service then sub: online is the chat's count, next the cursor of
	// the page that follows ("" when this one is the last).
	struct Page {
		int64_t online = 0;
		nlohmann::json users;
		std::string next;
	};
	// Joined adds c (when it has a sub) and calls done with the chat's online count (-1 when Redis did not answer).
	void Joined(Client &c, int64_t chat, std::function<void(int64_t online)> done);
	void Left(Client &c, int64_t chat);
	// Read calls done with the page of at most limit users past after (null when Redis did not answer).
	void Read(int64_t chat, const std::string &after, int64_t limit, std::function<void(const Page *)> done);
	// List answers `presence {chat_id, after, limit}`.
	void List(const conv::PresenceRequest &req, const Conversation::Reply &reply);
	void Stop();

  private:
	// Change runs the presence script: op "add", "rem" or "" (only drop expired members).
	void Change(int64_t chat, const std::string &op, const std::string &member, int64_t page, const std::string &after,
	            std::function<void(const RedisValue *reply)> done);
	// Refresh renews every local member that is still in the set; Resync, after each (re)connect of
	// the gateway's Redis connection, adds them all through the script, which counts them and announces
	// their users: a client admitted while Redis was unreachable, or a member Redis lost, comes back.
	void Refresh();
	void Resync();
	std::map<int64_t, std::vector<std::string>> LocalMembers() const;
	// The timing rules of --presence-ttl: members renewed every third of it; the chat's keys expire
	// twice it after their last change or renewal.
	uint64_t RefreshMs() const { return static_cast<uint64_t>(ctx_.cfg.presence_ttl / 3); }
	std::string KeysTtlMs() const { return std::to_string(2 * ctx_.cfg.presence_ttl); }

	ConvContext &ctx_;
	// This process' name in its members: the identity and the start time, so a restarted daemon with the
	// same --identity never shares a member with what its predecessor left to expire.
	std::string instance_;
	UvTimer timer_;
};

} // namespace chat_outboxd
