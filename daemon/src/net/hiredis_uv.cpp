// daemon/src/net/hiredis_uv.cpp - see hiredis_uv.hpp.
#include "net/hiredis_uv.hpp"

#include "base/c_boundary.hpp"
#include "base/uv_handle.hpp"

#include <hiredis/sds.h>

#include <memory>

#include "common/redis_transport.hpp"

namespace chat_outboxd {

RedisValue
ConvertReply(const redisReply *r)
{
	RedisValue v;
	switch (r->type) {
	case REDIS_REPLY_INTEGER:
		v.type = RedisValue::Type::Integer;
		v.integer = r->integer;
		break;
	case REDIS_REPLY_STRING:
		v.type = RedisValue::Type::String;
		v.str.assign(r->str, r->len);
		break;
	case REDIS_REPLY_STATUS:
		v.type = RedisValue::Type::Status;
		v.str.assign(r->str, r->len);
		break;
	case REDIS_REPLY_ERROR:
		v.type = RedisValue::Type::Error;
		v.str.assign(r->str, r->len);
		break;
	case REDIS_REPLY_ARRAY:
		v.type = RedisValue::Type::Array;
		v.elements.reserve(r->elements);
		for (size_t i = 0; i < r->elements; i++)
			v.elements.push_back(ConvertReply(r->element[i]));
		break;
	default:
		break;
	}
	return v;
}

// hiredis exports it (0.14 and 1.x) without declaring it: it hands the replies in the context's
// reader to their callbacks, as hiredis' own read handler does after reading.
extern "C" void redisProcessCallbacks(redisAsyncContext *ac);

namespace {

// TlsPhase: kOff: a plaintext context, hiredis reads and writes the socket itself. kTcp: the TCP
// connect is under way (hiredis checks it; nothing is written: the owner's connect callback has not
// run). kHandshake: TCP is up, the TLS handshake runs (the owner still waits for its connect
// callback, so the output buffer stays empty). kReady: the owner's callback ran; every byte goes
// through the session (common/redis_transport.hpp) and hiredis only formats, parses and calls back.
enum class TlsPhase { kOff,
	                  kTcp,
	                  kHandshake,
	                  kReady };

// UvEvents lives until its poll handle is closed: hiredis may free the context (and call UvCleanup)
// inside redisAsyncHandleRead, and UvOnPoll still reads p->ac after that.
struct UvEvents {
	redisAsyncContext *ac = nullptr;
	UvPoll poll{"redis"};
	int events = 0;
	// TLS only
	TlsPhase phase = TlsPhase::kOff;
	chat_outbox::RedisTls tls;
	std::string host;
	std::unique_ptr<chat_outbox::TlsSession> session;
	redisConnectCallback *on_connect = nullptr; // the owner's, run once the handshake is done
	chat_outbox::IoWait wait = chat_outbox::IoWait::kNone;
};

void UvUpdate(UvEvents *p);

// TlsFailed ends a context whose transport failed (c->err and errstr are set): hiredis' read
// handler sees the error before touching the socket and disconnects as for its own I/O errors
// (pending callbacks get a null reply, then the disconnect callback runs with REDIS_ERR).
void
TlsFailed(UvEvents *p)
{
	redisAsyncHandleRead(p->ac);
}

// TlsWatch sets the poll to what the session waits for: always readable (replies, a close), and
// writable while output is queued or the session needs to write.
void
TlsWatch(UvEvents *p)
{
	bool write = p->wait == chat_outbox::IoWait::kWrite ||
	             (p->phase == TlsPhase::kReady && sdslen(p->ac->c.obuf) > 0);
	p->events = UV_READABLE | (write ? UV_WRITABLE : 0);
	UvUpdate(p);
}

// TlsPump moves bytes both ways on a context past its TCP connect: the handshake first, then reads
// (handing replies to their callbacks, which may free the context) and writes of the output buffer.
void
TlsPump(UvEvents *p)
{
	redisContext *c = &p->ac->c;
	if (p->phase == TlsPhase::kHandshake) {
		if (chat_outbox::TransportHandshake(c, p->session.get(), &p->wait) != REDIS_OK) {
			TlsFailed(p);
			return;
		}
		if (p->wait != chat_outbox::IoWait::kNone) {
			TlsWatch(p);
			return;
		}
		p->phase = TlsPhase::kReady;
		if (p->on_connect)
			p->on_connect(p->ac, REDIS_OK); // the owner queues its handshake commands
		if (!p->ac)
			return;
	}
	chat_outbox::IoWait read_wait;
	if (chat_outbox::TransportRead(c, p->session.get(), &read_wait) != REDIS_OK) {
		TlsFailed(p);
		return;
	}
	redisProcessCallbacks(p->ac);
	if (!p->ac) // a callback freed the context
		return;
	int done = 1;
	chat_outbox::IoWait write_wait = chat_outbox::IoWait::kNone;
	if (sdslen(c->obuf) > 0 && chat_outbox::TransportWrite(c, p->session.get(), &done, &write_wait) != REDIS_OK) {
		TlsFailed(p);
		return;
	}
	p->wait = write_wait == chat_outbox::IoWait::kNone ? read_wait : write_wait;
	TlsWatch(p);
}

// TlsOnTcpConnect is hiredis' connect callback of a TLS context: TCP is up (or failed), and the
// owner's callback waits for the handshake. A failure here is the owner's connect failure; a
// session that cannot be made fails the context through hiredis' write that follows this callback.
void
TlsOnTcpConnect(const redisAsyncContext *cc, int status) noexcept
{
	auto *ac = const_cast<redisAsyncContext *>(cc);
	auto *p = static_cast<UvEvents *>(ac->ev.data);
	if (status != REDIS_OK) {
		if (p->on_connect)
			p->on_connect(ac, status);
		return;
	}
	CallFromC("redis", "the TLS handshake", [&] {
		std::string why;
		p->session = chat_outbox::TlsSession::Open(p->tls, p->host, ac->c.fd, &why);
		if (!p->session) {
			chat_outbox::TransportFail(&ac->c, REDIS_ERR_IO, why);
			return;
		}
		p->phase = TlsPhase::kHandshake;
		p->wait = chat_outbox::IoWait::kWrite; // the first pump sends the ClientHello
		TlsWatch(p);
	});
}

void
UvOnPoll(UvEvents *p, int status, int events)
{
	if (status < 0)
		events = UV_READABLE | UV_WRITABLE;
	if (p->phase == TlsPhase::kHandshake || p->phase == TlsPhase::kReady) {
		if (p->ac)
			TlsPump(p);
		return;
	}
	// A TLS context still connecting only lets hiredis check the connect (its read handler would
	// read the socket once connected).
	if (p->ac && (events & UV_READABLE) && p->phase == TlsPhase::kOff)
		redisAsyncHandleRead(p->ac);
	if (p->ac && (events & UV_WRITABLE))
		redisAsyncHandleWrite(p->ac);
}

void
UvUpdate(UvEvents *p)
{
	if (p->events)
		p->poll.Start(p->events, [p](int status, int events) { UvOnPoll(p, status, events); });
	else
		p->poll.Stop();
}

// UvWatch<flag, on> is hiredis' addRead / delRead / addWrite / delWrite. Once a TLS context is past
// its TCP connect, TlsWatch decides instead (what hiredis asks is for its own I/O).
template <int kFlag, bool kOn>
void
UvWatch(void *d) noexcept
{
	CallFromC("redis", "the event adapter", [d] {
		auto *p = static_cast<UvEvents *>(d);
		if (p->phase == TlsPhase::kHandshake || p->phase == TlsPhase::kReady) {
			if (kOn && kFlag == UV_WRITABLE && !(p->events & UV_WRITABLE) && p->phase == TlsPhase::kReady) {
				p->events |= UV_WRITABLE; // a command was queued
				UvUpdate(p);
			}
			return;
		}
		if (kOn)
			p->events |= kFlag;
		else
			p->events &= ~kFlag;
		UvUpdate(p);
	});
}

void
UvCleanup(void *d) noexcept
{
	CallFromC("redis", "the event adapter", [d] {
		auto *p = static_cast<UvEvents *>(d);
		p->ac = nullptr;
		p->session.reset();
		p->poll.Close([p] { delete p; });
	});
}

} // namespace

bool
AttachToLoop(redisAsyncContext *ac, uv_loop_t *loop)
{
	auto *p = new UvEvents;
	p->ac = ac;
	if (!p->poll.Open(loop, ac->c.fd)) {
		delete p;
		return false;
	}
	ac->ev.data = p;
	ac->ev.addRead = UvWatch<UV_READABLE, true>;
	ac->ev.delRead = UvWatch<UV_READABLE, false>;
	ac->ev.addWrite = UvWatch<UV_WRITABLE, true>;
	ac->ev.delWrite = UvWatch<UV_WRITABLE, false>;
	ac->ev.cleanup = UvCleanup;
	return true;
}

redisAsyncContext *
OpenContext(uv_loop_t *loop, const chat_outbox::RedisUrl &url, void *data, redisConnectCallback *on_connect,
            redisDisconnectCallback *on_disconnect, std::string *error)
{
	redisAsyncContext *c = url.unix_socket.empty() ? redisAsyncConnect(url.host.c_str(), url.port)
	                                               : redisAsyncConnectUnix(url.unix_socket.c_str());
	if (!c) {
		*error = "out of memory";
		return nullptr;
	}
	if (c->err) {
		*error = c->errstr;
		redisAsyncFree(c);
		return nullptr;
	}
	c->data = data;
	if (!AttachToLoop(c, loop)) {
		redisAsyncFree(c);
		*error = "cannot watch the socket";
		return nullptr;
	}
	if (url.tls.enabled) {
		auto *p = static_cast<UvEvents *>(c->ev.data);
		p->phase = TlsPhase::kTcp;
		p->tls = url.tls;
		p->host = url.host;
		p->on_connect = on_connect;
		redisAsyncSetConnectCallback(c, TlsOnTcpConnect);
	} else
		redisAsyncSetConnectCallback(c, on_connect);
	redisAsyncSetDisconnectCallback(c, on_disconnect);
	return c;
}

} // namespace chat_outboxd
