// common/redis_transport.hpp - how the bytes of a hiredis context reach Redis: plaintext or TLS,
// for every Redis client of the project (the extension's relay, chat-outbox-relay through
// common/redis_blocking.hpp, Sentinel discovery, the daemon's libuv adapter).
//
// hiredis keeps what it is good at: formatting commands into the context's output buffer and
// parsing replies with its reader. These functions move the bytes in between. Without a TLS
// session they are hiredis' own redisBufferWrite / redisBufferRead; with one (common/tls_session)
// they write the output buffer through it and feed what it decrypts to the context's reader,
// which hiredis 0.14 (Debian 12) cannot do itself. Rules: nothing blocks; every call says what the
// socket must become ready for before it is retried (IoWait); a failure sets the context's err
// and errstr, as hiredis' own I/O does, so callers report ctx->errstr whichever path failed.
#pragma once

#include <hiredis/hiredis.h>

#include "common/tls_session.hpp"

namespace chat_outbox {

enum class IoWait { kNone,
	                kRead,
	                kWrite };

// TransportHandshake drives tls's handshake on c's connected socket: REDIS_OK with *wait kNone
// once done, REDIS_OK with a wait to retry after, REDIS_ERR (c->errstr says why).
int TransportHandshake(redisContext *c, TlsSession *tls, IoWait *wait);

// TransportWrite writes what it can of c's output buffer: *done when it is empty, else *wait.
int TransportWrite(redisContext *c, TlsSession *tls, int *done, IoWait *wait);

// TransportRead reads what the socket has into c's reader (a TLS session is read until it has
// nothing buffered, since a socket poll cannot see what OpenSSL holds); *wait says what to wait for
// before the next read. REDIS_ERR when the connection failed or closed.
int TransportRead(redisContext *c, TlsSession *tls, IoWait *wait);

// TransportFail sets c's error as hiredis does (err REDIS_ERR_IO, errstr why, cut to fit).
void TransportFail(redisContext *c, int err, const std::string &why);

} // namespace chat_outbox
