// daemon/src/net/hiredis_uv.cpp - see hiredis_uv.hpp.
#include "net/hiredis_uv.hpp"

#include "base/c_boundary.hpp"
#include "base/uv_handle.hpp"

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

namespace {

// UvEvents lives until its poll handle is closed: hiredis may free the context (and call UvCleanup)
// inside redisAsyncHandleRead, and UvOnPoll still reads p->ac after that.
struct UvEvents {
	redisAsyncContext *ac;
	UvPoll poll{"redis"};
	int events = 0;
};

void
UvOnPoll(UvEvents *p, int status, int events)
{
	if (status < 0)
		events = UV_READABLE | UV_WRITABLE;
	if (p->ac && (events & UV_READABLE))
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

// UvWatch<flag, on> is hiredis' addRead / delRead / addWrite / delWrite.
template <int kFlag, bool kOn>
void
UvWatch(void *d) noexcept
{
	CallFromC("redis", "the event adapter", [d] {
		auto *p = static_cast<UvEvents *>(d);
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
		p->poll.Close([p] { delete p; });
	});
}

} // namespace

bool
AttachToLoop(redisAsyncContext *ac, uv_loop_t *loop)
{
	auto *p = new UvEvents{ac};
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
	redisAsyncSetConnectCallback(c, on_connect);
	redisAsyncSetDisconnectCallback(c, on_disconnect);
	return c;
}

} // namespace chat_outboxd
