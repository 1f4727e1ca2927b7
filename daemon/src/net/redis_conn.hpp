// daemon/src/net/redis_conn.hpp - one async hiredis connection on the libuv loop.
//
// It connects (TCP or unix socket), authenticates (AUTH password, or ACL user + password from the
// URL), SELECTs the db and names itself (CLIENT SETNAME), then reports Ready. Every command has a
// deadline (hiredis 0.14 has none): a command that outlives it drops the whole connection, because
// a Redis connection is a FIFO and nothing after a lost reply can be trusted. A dropped connection
// fails every pending command (reply == nullptr) and reconnects with backoff. It knows nothing of
// BullMQ: scripts are neutral chat_outbox::ScriptCall values (common/redis_script.hpp). It is the
// RedisCommands (net/redis_commands.hpp) of a plain or redis-sentinel:// URL, and each of a
// ClusterConn's connections to one master.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include "base/log.hpp"
#include "net/redis_commands.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelWatchers;

class RedisConn : public RedisCommands {
  public:
	// state_log receives up/down transitions (may be shared by several connections or be null:
	// then changes are logged at verbose level only). watchers: the daemon's Sentinel watch, which a
	// redis-sentinel:// URL's connection follows (net/sentinel_watchers.hpp; null for other URLs).
	RedisConn(uv_loop_t *loop, chat_outbox::RedisUrl url, std::string role, std::string client_name,
	          int64_t timeout_ms, StateLog *state_log, SentinelWatchers *watchers);
	~RedisConn() override;
	RedisConn(const RedisConn &) = delete;
	RedisConn &operator=(const RedisConn &) = delete;

	void Start() override;
	bool Ready() const override;
	void OnReady(std::function<void()> on_ready) override;
	void OnDown(std::function<void()> on_down) override;
	void Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms = 0) override;
	// ClientId is this connection's CLIENT ID, learnt during the handshake.
	int64_t ClientId() const override;
	void Drop(const std::string &why) override;
	void Close(std::function<void()> done) override;

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
