// daemon/src/gateway/conversation/presence.hpp - presence: one member per present client in the chat's sorted set
// in Redis (score = expiry, --presence-ttl ahead, renewed every third of it), changed and published
// atomically by one script, so every gateway of every service shows the same list and a killed
// gateway's clients expire. The chat's keys expire twice the ttl after their last change or renewal.
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
	// Joined adds c (when it has a sub) and calls done with the chat's users (empty when Redis did not answer).
	void Joined(Client &c, int64_t chat, std::function<void(nlohmann::json users)> done);
	void Left(Client &c, int64_t chat);
	// List answers `presence {chat_id}`.
	void List(int64_t chat, const Conversation::Reply &reply);
	void Stop();

  private:
	// Change runs the presence script: op "add", "rem" or "" (only drop expired members).
	void Change(int64_t chat, const std::string &op, const std::string &member,
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
