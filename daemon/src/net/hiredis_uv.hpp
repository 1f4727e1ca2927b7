// daemon/src/net/hiredis_uv.hpp - what every async hiredis context of the daemon shares: our libuv
// event adapter and the conversion of a reply into a RedisValue.
#pragma once

#include <uv.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <string>

#include "net/core/redis_value.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

// AttachToLoop makes loop drive ac's socket; false when the socket cannot be watched (the caller
// frees ac). hiredis' own libuv adapter (0.14) ignores a uv_poll error status, and libuv reports a
// refused or reset socket exactly that way (status < 0, poll stopped), so hiredis would never learn
// the connect failed and the connection would hang until our deadline. This adapter hands such an
// event to hiredis as readable + writable; hiredis then reads the socket error itself and runs the
// usual connect/disconnect callbacks.
bool AttachToLoop(redisAsyncContext *ac, uv_loop_t *loop);

// OpenContext starts connecting to url on loop with data as the context's data and the two callbacks
// set; nullptr with *error when that fails at once (the caller retries). For a rediss:// url (url.tls)
// the context speaks TLS (common/redis_transport.hpp): on_connect runs once the TCP connect and the TLS
// handshake are both done, and a handshake that fails (a certificate refused, a server that does not
// speak TLS) ends the context through on_disconnect with REDIS_ERR and the reason in errstr, as a lost
// connection does.
redisAsyncContext *OpenContext(uv_loop_t *loop, const chat_outbox::RedisUrl &url, void *data,
                               redisConnectCallback *on_connect, redisDisconnectCallback *on_disconnect,
                               std::string *error);

// ConvertReply copies a hiredis reply (nested arrays included).
RedisValue ConvertReply(const redisReply *r);

} // namespace chat_outboxd
