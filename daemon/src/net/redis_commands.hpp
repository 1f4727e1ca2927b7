// daemon/src/net/redis_commands.hpp - what the daemon's parts send Redis commands through, whatever
// the broker is: one server (RedisConn: a plain or a redis-sentinel:// URL) or a Redis Cluster
// (ClusterConn: a redis-cluster:// URL, each command to the master of its key's slot). The kind is
// chosen once at start-up from the URL (MakeRedisCommands); the consumer, the partition manager, the
// bus's publisher and the gateway see only this interface.
//
// Rules every implementation keeps: a callback never runs inside the call that sent it; reply is
// nullptr when the command got no answer (connection lost, timed out, closed), otherwise it may still
// be an error reply; a command is sent once (a connection lost after sending fails it: its caller
// decides what to do again); OnReady listeners run after every (re)connect of the connection that
// carries the commands without a key (Ready: that connection is up).
#pragma once

#include <cstdint>
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

class SentinelWatchers;

class RedisCommands {
  public:
	using ReplyCb = std::function<void(const RedisValue *reply, const std::string &error)>;

	virtual ~RedisCommands() = default;

	virtual void Start() = 0;
	virtual bool Ready() const = 0;
	// OnReady adds a listener that runs after every successful (re)connect and handshake;
	// OnDown sets the one that runs when it is lost.
	virtual void OnReady(std::function<void()> on_ready) = 0;
	virtual void OnDown(std::function<void()> on_down) = 0;
	// Command sends one command; timeout_ms 0 uses the connection's default.
	virtual void Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms = 0) = 0;
	// Eval runs a script with EVALSHA, and once more with EVAL when Redis answers NOSCRIPT (restarted,
	// flushed, or another node of a cluster). timeout_ms as for Command: a script queued behind a
	// blocking command needs that command's wait too.
	void Eval(const chat_outbox::ScriptCall &call, ReplyCb cb, int64_t timeout_ms = 0);
	// ClientId is the CLIENT ID of the connection that carries the commands without a key, learnt
	// during its handshake (a CLIENT UNBLOCK of it must go through another RedisCommands of the same
	// home: on a cluster, the same slot).
	virtual int64_t ClientId() const = 0;
	// Drop closes the connection(s) as if they had failed (reconnects with backoff).
	virtual void Drop(const std::string &why) = 0;
	// Close fails pending commands and calls done once every uv handle is closed.
	virtual void Close(std::function<void()> done) = 0;
};

// MakeRedisCommands: a RedisConn for a plain or sentinel URL; for a redis-cluster:// URL a ClusterConn
// whose commands without a key (PUBLISH, CLIENT ..., INFO) go to the master of home_key's slot, and
// which connects to every master at once when all_masters (a part whose keys spread over the slots,
// such as the gateway's chats) or only to the masters its commands need. watchers: the daemon's Sentinel
// watch, which a RedisConn of a redis-sentinel:// URL follows (net/sentinel_watchers.hpp).
std::unique_ptr<RedisCommands> MakeRedisCommands(uv_loop_t *loop, const chat_outbox::RedisUrl &url,
                                                 const std::string &home_key, bool all_masters, std::string role,
                                                 std::string client_name, int64_t timeout_ms, StateLog *state_log,
                                                 SentinelWatchers *watchers);

} // namespace chat_outboxd
