// daemon/src/net/hiredis_link.hpp - the life of one async hiredis connection, shared by RedisConn
// (commands) and RedisSubscriber (pub/sub): the one owner of the live context, the route to Redis
// (net/core/sentinel_route.hpp), the connect and handshake deadlines and the reconnect backoff.
//
// It connects, sends the handshake pipeline (the route's commands: AUTH/SELECT and ROLE for a master
// named by a sentinel; then CLIENT SETNAME and the owner's own tail) and calls `up` with the reply
// to its last command. A redis-sentinel:// URL first asks a sentinel on a short-lived context and
// reconnects at once to the master it named. Every lost or failed connection calls `down`, is
// logged once per cause of an outage (StateLog, or at verbose level only when there is none) and is retried
// with backoff; the owner says when its own work is up again (Recovered), which ends the outage.
// Connecting and the handshake each have timeout_ms; the owner may await more (Await), for
// example a subscribe confirmation: a deadline missed drops the context.
// On a redis-sentinel:// URL the link also follows Sentinel while it is connected: from Start to
// Close it subscribes to the daemon's Sentinel watch (net/sentinel_watchers.hpp, Options::watchers),
// which tells it where the sentinels name its master, and its owner passes on every error reply
// (CommandError); a switch of our master elsewhere (SentinelRoute::SwitchedAway), or a READONLY or
// UNBLOCKED error (SentinelRoute::MasterMovedError), drops the context at the next tick and the
// reconnect asks the sentinels again. Logged once per switch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include <hiredis/async.h>

#include "common/backoff.hpp"
#include "base/log.hpp"
#include "base/uv_timer.hpp"
#include "net/core/redis_value.hpp"
#include "net/core/sentinel_route.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class SentinelWatchers;

class HiredisLink {
  public:
	// Idle: not started; Down: no context (waiting to connect or to retry); Connecting: TCP connect
	// under way; Handshaking: the handshake pipeline sent (or, to a sentinel, its query); Up: the
	// handshake is done and the context carries the owner's commands; Closed: Close ran.
	enum class State { Idle,
		               Down,
		               Connecting,
		               Handshaking,
		               Up,
		               Closed };

	struct Options {
		std::string who;         // the name in the log (and in CallFromC's report)
		std::string client_name; // CLIENT SETNAME
		int64_t timeout_ms;
		StateLog *state_log;                        // null: changes are logged at verbose level only
		bool keepalive;                             // TCP keepalive on a connection to the master
		std::vector<std::vector<std::string>> tail; // the owner's commands after CLIENT SETNAME
		SentinelWatchers *watchers;                 // the daemon's Sentinel watch (null: none, as for the watch's own link)
	};
	// up runs when the handshake is done, with the reply to its last command. down runs whenever
	// the context is lost before the retry is planned (not after Close).
	HiredisLink(uv_loop_t *loop, const chat_outbox::RedisUrl &url, Options options,
	            std::function<void(const RedisValue &last)> up, std::function<void(const std::string &why)> down);
	// The same on a route of the caller's (the Sentinel watch's: SentinelRoute::ToSentinels).
	HiredisLink(uv_loop_t *loop, SentinelRoute route, Options options, std::function<void(const RedisValue &last)> up,
	            std::function<void(const std::string &why)> down);
	~HiredisLink();
	HiredisLink(const HiredisLink &) = delete;
	HiredisLink &operator=(const HiredisLink &) = delete;

	// Start connects on the next turn of the loop (nothing runs inside this call).
	void Start();
	// OnTick: tick runs at every check of the link's deadline (every 100 ms from Start to Close), so
	// the owner checks its own deadlines on the same timer.
	void OnTick(std::function<void()> tick) { tick_ = std::move(tick); }
	State GetState() const { return state_; }
	// Route: where the link goes (Route().Next(): the address of the live context, or of the next one).
	const SentinelRoute &Route() const { return route_; }
	bool Up() const { return state_ == State::Up; }
	bool Closed() const { return state_ == State::Closed; }
	// Context: the live context, null when there is none. Replies of any other context are stale.
	redisAsyncContext *Context() const { return ac_; }
	// Send queues argv on the live context; false when there is none or hiredis refuses it.
	bool Send(const std::vector<std::string> &argv, redisCallbackFn *fn, void *privdata);
	// DropReason: why the context is being freed, while hiredis runs its pending callbacks with a
	// null reply ("" when it was lost by itself).
	const std::string &DropReason() const { return drop_reason_; }
	// Await arms a deadline of timeout_ms for what, unless one runs already; missing it drops the
	// context with "<what> timed out", followed by hint (a static text naming the likely cause) if given.
	void Await(const char *what, const char *hint = nullptr);
	// Recovered: the owner's work is up again. Clears the deadline, resets the backoff, logs the end
	// of an outage (detail says what recovered).
	void Recovered(const std::string &detail = "");
	// CommandError: an error reply to one of the owner's commands; one that says the master moved
	// drops the context at the next tick (a redis-sentinel:// URL only).
	void CommandError(const std::string &error);
	// Drop frees the live context as if it had failed: pending callbacks get a null reply, then
	// down runs and a retry is planned.
	void Drop(const std::string &why);
	// Shut frees the context for good (pending callbacks get a null reply, DropReason "closing");
	// nothing is retried and neither up nor down runs again.
	void Shut();
	// Close is Shut, then closes the timers; done runs once their handles are released.
	void Close(std::function<void()> done);

  private:
	struct HandshakeStep;

	template <typename F>
	static void ForLive(const redisAsyncContext *c, const char *where, F &&f) noexcept;
	static void OnConnect(const redisAsyncContext *c, int status) noexcept;
	static void OnDisconnect(const redisAsyncContext *c, int status) noexcept;
	static void OnHandshakeReply(redisAsyncContext *c, void *r, void *privdata) noexcept;
	void Connect();
	void Handshake();
	void HandshakeReply(const HandshakeStep &step, const redisReply *reply);
	void Gone(const std::string &why);
	void Watchdog();
	void MasterMoved(const std::string &why);

	uv_loop_t *loop_;
	SentinelRoute route_;
	bool worked_ = false;    // Recovered ran once: its owner's work was up
	bool lost_ = false;      // lost since it worked: the next Recovered is a reconnect (Reconnects())
	bool switching_ = false; // the sentinel's context is closed on purpose, to connect to the master
	Options opt_;
	std::function<void(const RedisValue &)> up_;
	std::function<void(const std::string &)> down_;
	std::function<void()> tick_;
	State state_ = State::Idle;
	redisAsyncContext *ac_ = nullptr;
	uint64_t deadline_ = 0; // 0: nothing awaited
	std::string deadline_what_;
	const char *deadline_hint_ = nullptr; // a static text naming the likely cause, appended when it times out
	std::string drop_reason_;
	chat_outbox::Backoff backoff_{chat_outbox::kServerRetryFirstMs, chat_outbox::kServerRetryMaxMs};
	UvTimer retry_timer_, watchdog_;
	std::string moved_;     // why the master moved under the live context: dropped at the next tick
	uint64_t watch_id_ = 0; // the subscription to opt_.watchers, from Start to Shut (0: none)
};

} // namespace chat_outboxd
