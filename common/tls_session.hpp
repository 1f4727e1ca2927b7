// common/tls_session.hpp - one TLS client session (OpenSSL) over a connected non-blocking socket,
// for the Redis connections of the relay (extension and process) and the daemon.
//
// Rules: the server's certificate is verified, its chain against the URL's cacert (the system store
// when there is none) and its name against sni, else the host connected to (an IP address is matched
// as one), unless the URL says insecure=1. Nothing here blocks or logs: every call says what the
// socket must become ready for (TlsStep) and the caller waits its own way (poll, libuv,
// WaitLatchOrSocket). Errors are one short line that names the cause a user can fix (the chain,
// an expired or wrong-name certificate, a server that does not speak TLS), so the clients can put
// them in their logs and status as they are.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/redis_url.hpp"

namespace chat_outbox {

// kDone: the call did its work; kWantRead / kWantWrite: retry the same call once the socket is
// readable / writable; kClosed: the server closed the connection; kFailed: *error says why.
enum class TlsStep { kDone,
	                 kWantRead,
	                 kWantWrite,
	                 kClosed,
	                 kFailed };

// kTlsSilentHint ends an error where a TLS handshake got no answer or was cut: a plaintext server
// behind a rediss:// URL reads the ClientHello as an unfinished inline command and never answers,
// so a timeout is all a client sees; each client appends this to name the likely cause.
inline constexpr const char *kTlsSilentHint = "(does the server speak TLS on this port?)";

class TlsSession {
  public:
	// Open prepares a session on fd (connected to host); nullptr with *error when the URL's files
	// cannot be loaded (a missing CA file, a key that does not match its certificate).
	static std::unique_ptr<TlsSession> Open(const RedisTls &tls, const std::string &host, int fd, std::string *error);
	~TlsSession();
	TlsSession(const TlsSession &) = delete;
	TlsSession &operator=(const TlsSession &) = delete;

	// Handshake drives the TLS handshake; kDone once the server is verified.
	TlsStep Handshake(std::string *error);
	// Read reads up to cap bytes into buf (*got of them on kDone).
	TlsStep Read(char *buf, size_t cap, size_t *got, std::string *error);
	// Write writes from buf (*put bytes of len on kDone; partial writes are allowed, and a retry
	// after kWant* may pass a buffer that moved or grew, as long as it starts with the same bytes).
	TlsStep Write(const char *buf, size_t len, size_t *put, std::string *error);

  private:
	struct Impl;
	explicit TlsSession(std::unique_ptr<Impl> impl);
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outbox
