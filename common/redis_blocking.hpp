// common/redis_blocking.hpp - one blocking Redis connection with a deadline on every call, plaintext
// or TLS (common/redis_transport.hpp), for the processes' synchronous clients: chat-outbox-relay
// (common/relay/redis_server_link.hpp) and Sentinel discovery (common/redis_sentinel.hpp).
//
// Each call (the connect with its TLS handshake, each command) waits at most timeout_ms in poll().
// A failure closes the connection and Error() says why; the caller reconnects. A process whose
// signals must cut a wait short (the extension's relay worker: SIGTERM at once, not after the
// timeout) sets an interrupt check (SetBlockingInterrupt): waits then poll in slices of at most
// kInterruptSliceMs and fail with "interrupted" as soon as the check says so.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/redis_url.hpp"
#include "common/tls_session.hpp"

namespace chat_outbox {

// The longest a wait goes without asking the interrupt check.
constexpr int kInterruptSliceMs = 100;
// SetBlockingInterrupt: the process's interrupt check (nullptr: none, waits run to their deadline). It
// is called between poll slices, so it must be cheap and must not throw.
using BlockingInterrupt = bool (*)();
void SetBlockingInterrupt(BlockingInterrupt check);

class BlockingRedis {
  public:
	BlockingRedis() = default;
	~BlockingRedis() { Close(); }
	BlockingRedis(const BlockingRedis &) = delete;
	BlockingRedis &operator=(const BlockingRedis &) = delete;

	// Connect to target's host:port (or unix socket), with the TLS handshake of target.tls when it
	// is enabled. false with Error() set.
	bool Connect(const RedisUrl &target, int64_t timeout_ms);
	// Command sends argv and returns its reply (the caller frees it with freeReplyObject; it may be
	// an error reply), or nullptr when the connection failed (it is closed then).
	redisReply *Command(const std::vector<std::string> &argv);
	// Formatted sends one already-encoded command (RESP) the same way.
	redisReply *Formatted(const std::string &resp);
	void Close();
	bool Connected() const { return ctx_ != nullptr; }
	const std::string &Error() const { return error_; }

  private:
	bool Wait(bool write, int64_t deadline_ms);
	redisReply *Roundtrip();
	bool Fail(const std::string &what);

	redisContext *ctx_ = nullptr;
	std::unique_ptr<TlsSession> tls_;
	int64_t timeout_ms_ = 0;
	bool interrupted_ = false; // the last Wait stopped for the interrupt check, not its deadline
	std::string error_;
};

} // namespace chat_outbox
