// common/redis_transport.cpp - see redis_transport.hpp.
#include "common/redis_transport.hpp"

#include <cstdio>
#include <string>

// hiredis' sds.h declares its functions without C linkage (hiredis.h includes it outside its
// extern "C"), so sdsrange, which drops the written bytes from the output buffer as hiredis' own
// write does, is declared here by its symbol, with each major's signature.
#if HIREDIS_MAJOR >= 1
extern "C" int ChatOutboxSdsRange(char *s, ssize_t start, ssize_t end) __asm__("sdsrange");
#else
extern "C" void ChatOutboxSdsRange(char *s, int start, int end) __asm__("sdsrange");
#endif

namespace chat_outbox {

namespace {

// kReadChunk: as much as hiredis' own redisBufferRead reads at once.
constexpr size_t kReadChunk = 16 * 1024;

IoWait
WaitOf(TlsStep step)
{
	return step == TlsStep::kWantWrite ? IoWait::kWrite : IoWait::kRead;
}

} // namespace

void
TransportFail(redisContext *c, int err, const std::string &why)
{
	c->err = err;
	snprintf(c->errstr, sizeof c->errstr, "%s", why.c_str());
}

int
TransportHandshake(redisContext *c, TlsSession *tls, IoWait *wait)
{
	*wait = IoWait::kNone;
	if (!tls)
		return REDIS_OK;
	std::string why;
	TlsStep step = tls->Handshake(&why);
	if (step == TlsStep::kDone)
		return REDIS_OK;
	if (step == TlsStep::kWantRead || step == TlsStep::kWantWrite) {
		*wait = WaitOf(step);
		return REDIS_OK;
	}
	TransportFail(c, REDIS_ERR_IO,
	              step == TlsStep::kClosed ? "TLS: the server closed the connection during the handshake" : why);
	return REDIS_ERR;
}

int
TransportWrite(redisContext *c, TlsSession *tls, int *done, IoWait *wait)
{
	*wait = IoWait::kNone;
	if (!tls) {
		int rc = redisBufferWrite(c, done);
		if (rc == REDIS_OK && !*done)
			*wait = IoWait::kWrite;
		return rc;
	}
	if (c->err)
		return REDIS_ERR;
	while (sdslen(c->obuf) > 0) {
		size_t put = 0;
		std::string why;
		TlsStep step = tls->Write(c->obuf, sdslen(c->obuf), &put, &why);
		if (step == TlsStep::kDone) {
			ChatOutboxSdsRange(c->obuf, static_cast<int>(put), -1);
			continue;
		}
		if (step == TlsStep::kWantRead || step == TlsStep::kWantWrite) {
			*wait = WaitOf(step);
			*done = 0;
			return REDIS_OK;
		}
		TransportFail(c, step == TlsStep::kClosed ? REDIS_ERR_EOF : REDIS_ERR_IO,
		              step == TlsStep::kClosed ? "Server closed the connection" : why);
		return REDIS_ERR;
	}
	*done = 1;
	return REDIS_OK;
}

int
TransportRead(redisContext *c, TlsSession *tls, IoWait *wait)
{
	*wait = IoWait::kRead;
	if (!tls)
		return redisBufferRead(c);
	if (c->err)
		return REDIS_ERR;
	char buf[kReadChunk];
	bool fed = false;
	for (;;) {
		size_t got = 0;
		std::string why;
		TlsStep step = tls->Read(buf, sizeof buf, &got, &why);
		if (step == TlsStep::kDone) {
			if (redisReaderFeed(c->reader, buf, got) != REDIS_OK) {
				TransportFail(c, c->reader->err, c->reader->errstr);
				return REDIS_ERR;
			}
			fed = true;
			continue;
		}
		if (step == TlsStep::kWantRead || step == TlsStep::kWantWrite) {
			*wait = WaitOf(step);
			return REDIS_OK;
		}
		if (step == TlsStep::kClosed && fed)
			return REDIS_OK; // the replies read first are the caller's; the next read reports the close
		TransportFail(c, step == TlsStep::kClosed ? REDIS_ERR_EOF : REDIS_ERR_IO,
		              step == TlsStep::kClosed ? "Server closed the connection" : why);
		return REDIS_ERR;
	}
}

} // namespace chat_outbox
