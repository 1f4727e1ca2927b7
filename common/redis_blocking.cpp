// common/redis_blocking.cpp - see redis_blocking.hpp.
#include "common/redis_blocking.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/redis_argv.hpp"
#include "common/redis_transport.hpp"

namespace chat_outbox {

namespace {

BlockingInterrupt interrupt_check = nullptr;

int64_t
MonotonicMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

} // namespace

void
SetBlockingInterrupt(BlockingInterrupt check)
{
	interrupt_check = check;
}

void
BlockingRedis::Close()
{
	tls_.reset(); // before the context: the session does not own the socket
	if (ctx_)
		redisFree(ctx_);
	ctx_ = nullptr;
}

bool
BlockingRedis::Fail(const std::string &what)
{
	error_ = interrupted_ ? what.substr(0, what.find(':')) + ": interrupted" : what;
	if (ctx_ && ctx_->err)
		error_ += std::string(": ") + (ctx_->errstr[0] ? ctx_->errstr : "connection closed");
	Close();
	return false;
}

bool
BlockingRedis::Wait(bool write, int64_t deadline_ms)
{
	interrupted_ = false;
	for (;;) {
		if (interrupt_check && interrupt_check()) {
			interrupted_ = true;
			return false;
		}
		int64_t left = deadline_ms - MonotonicMs();
		if (left <= 0)
			return false;
		if (interrupt_check)
			left = std::min<int64_t>(left, kInterruptSliceMs);
		struct pollfd p = {ctx_->fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
		int rc = poll(&p, 1, static_cast<int>(left));
		if (rc > 0)
			return true;
		if (rc < 0 && errno != EINTR)
			return false;
	}
}

bool
BlockingRedis::Connect(const RedisUrl &target, int64_t timeout_ms)
{
	Close();
	interrupted_ = false;
	timeout_ms_ = timeout_ms;
	int64_t deadline = MonotonicMs() + timeout_ms;
	ctx_ = target.unix_socket.empty() ? redisConnectNonBlock(target.host.c_str(), target.port)
	                                  : redisConnectUnixNonBlock(target.unix_socket.c_str());
	if (!ctx_)
		return Fail("connect: out of memory");
	if (ctx_->err)
		return Fail("connect");
	if (!Wait(true, deadline))
		return Fail("connect: timed out");
	int soerr = 0;
	socklen_t len = sizeof soerr;
	if (getsockopt(ctx_->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0)
		return Fail(std::string("connect: ") + strerror(soerr ? soerr : errno));
	if (!target.tls.enabled)
		return true;
	std::string why;
	tls_ = TlsSession::Open(target.tls, target.host, ctx_->fd, &why);
	if (!tls_)
		return Fail(why);
	for (;;) {
		IoWait wait;
		if (TransportHandshake(ctx_, tls_.get(), &wait) != REDIS_OK)
			return Fail("connect");
		if (wait == IoWait::kNone)
			return true;
		if (!Wait(wait == IoWait::kWrite, deadline))
			return Fail(std::string("connect: TLS handshake timed out ") + kTlsSilentHint);
	}
}

redisReply *
BlockingRedis::Roundtrip()
{
	int64_t deadline = MonotonicMs() + timeout_ms_;
	interrupted_ = false;
	for (;;) {
		int done = 0;
		IoWait wait;
		if (TransportWrite(ctx_, tls_.get(), &done, &wait) != REDIS_OK) {
			Fail("write");
			return nullptr;
		}
		if (done)
			break;
		if (!Wait(wait == IoWait::kWrite, deadline)) {
			Fail("write: timed out");
			return nullptr;
		}
	}
	for (;;) {
		void *reply = nullptr;
		if (redisGetReplyFromReader(ctx_, &reply) != REDIS_OK) {
			Fail("protocol");
			return nullptr;
		}
		if (reply)
			return static_cast<redisReply *>(reply);
		IoWait wait;
		if (TransportRead(ctx_, tls_.get(), &wait) != REDIS_OK) {
			Fail("read");
			return nullptr;
		}
		// a TLS read may have buffered a whole reply: look before waiting
		reply = nullptr;
		if (redisGetReplyFromReader(ctx_, &reply) != REDIS_OK) {
			Fail("protocol");
			return nullptr;
		}
		if (reply)
			return static_cast<redisReply *>(reply);
		if (!Wait(wait == IoWait::kWrite, deadline)) {
			Fail("read: timed out");
			return nullptr;
		}
	}
}

redisReply *
BlockingRedis::Command(const std::vector<std::string> &argv)
{
	if (!ctx_) {
		error_ = "not connected";
		return nullptr;
	}
	RedisArgv args(argv); // not const: hiredis 0.14 takes const char ** (pointers it may not be given as const)
	if (redisAppendCommandArgv(ctx_, args.Count(), args.ptrs.data(), args.lens.data()) != REDIS_OK) {
		Fail(argv.empty() ? "command" : argv[0]);
		return nullptr;
	}
	return Roundtrip();
}

redisReply *
BlockingRedis::Formatted(const std::string &resp)
{
	if (!ctx_) {
		error_ = "not connected";
		return nullptr;
	}
	if (redisAppendFormattedCommand(ctx_, resp.data(), resp.size()) != REDIS_OK) {
		Fail("command");
		return nullptr;
	}
	return Roundtrip();
}

} // namespace chat_outbox
