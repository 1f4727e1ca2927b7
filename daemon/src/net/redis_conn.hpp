// daemon/src/net/redis_conn.hpp - one async hiredis connection on the libuv loop.
//
// It connects (TCP or unix socket), authenticates (AUTH password, or ACL user + password from the
// URL), SELECTs the db and names itself (CLIENT SETNAME), then reports Ready. Every command has a
// deadline (hiredis 0.14 has none): a command that outlives it drops the whole connection, because
// a Redis connection is a FIFO and nothing after a lost reply can be trusted. A dropped connection
// fails every pending command (reply == nullptr) and reconnects with backoff. It knows nothing of
// BullMQ: scripts are neutral chat_outbox::ScriptCall values (common/redis_script.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include "base/log.hpp"
#include "net/core/redis_value.hpp"
#include "common/redis_script.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class RedisConn {
  public:
	// reply is nullptr when the command never got an answer (connection lost, timed out, closed);
	// otherwise it may still be an error reply.
	using ReplyCb = std::function<void(const RedisValue *reply, const std::string &error)>;

	// state_log receives up/down transitions (may be shared by several connections or be null:
	// then changes are logged at verbose level only).
	RedisConn(uv_loop_t *loop, chat_outbox::RedisUrl url, std::string role, std::string client_name,
	          int64_t timeout_ms, StateLog *state_log);
	~RedisConn();
	RedisConn(const RedisConn &) = delete;
	RedisConn &operator=(const RedisConn &) = delete;

	void Start();
	bool Ready() const;
	// OnReady adds a listener that runs after every successful (re)connect and handshake;
	// OnDown sets the one that runs when it is lost.
	void OnReady(std::function<void()> on_ready);
	void OnDown(std::function<void()> on_down);

	// Command sends one command; timeout_ms 0 uses the connection's default. The callback never
	// runs inside this call.
	void Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms = 0);
	// Eval runs a script with EVALSHA, and once more with EVAL when Redis answers NOSCRIPT (restarted
	// or flushed). timeout_ms as for Command: a script queued behind a blocking command needs that
	// command's wait too.
	void Eval(const chat_outbox::ScriptCall &call, ReplyCb cb, int64_t timeout_ms = 0);
	// ClientId is this connection's CLIENT ID, learnt during the handshake.
	int64_t ClientId() const;
	// Drop closes the connection as if it had failed (reconnects with backoff).
	void Drop(const std::string &why);
	// Close fails pending commands and calls done once every uv handle is closed.
	void Close(std::function<void()> done);

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
