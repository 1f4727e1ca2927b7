// common/tls_session.cpp - see tls_session.hpp.
//
// A new SSL_CTX per session, on purpose: the URL's files are read at every connect, so a CA file or
// certificate replaced in place is used by the next connection without a restart, and a connection
// is rare (the clients keep theirs).
#include "common/tls_session.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace chat_outbox {

struct TlsSession::Impl {
	SSL_CTX *ctx = nullptr;
	SSL *ssl = nullptr;
	bool verify = true;
	~Impl()
	{
		if (ssl)
			SSL_free(ssl);
		if (ctx)
			SSL_CTX_free(ctx);
	}
};

namespace {

bool
IsIpAddress(const std::string &host)
{
	unsigned char buf[16];
	return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// QueueError is OpenSSL's first queued error as text (and clears the queue).
std::string
QueueError()
{
	unsigned long e = ERR_get_error();
	const char *reason = e ? ERR_reason_error_string(e) : nullptr;
	ERR_clear_error();
	return reason ? reason : "";
}

// Failure turns the result of an SSL call that failed into a step and, for kFailed, the one line a
// user can act on.
TlsStep
Failure(SSL *ssl, int rc, bool verify, std::string *error)
{
	int err = SSL_get_error(ssl, rc);
	switch (err) {
	case SSL_ERROR_WANT_READ:
		return TlsStep::kWantRead;
	case SSL_ERROR_WANT_WRITE:
		return TlsStep::kWantWrite;
	case SSL_ERROR_ZERO_RETURN:
		ERR_clear_error();
		return TlsStep::kClosed;
	default:
		break;
	}
	long verdict = SSL_get_verify_result(ssl);
	if (verify && verdict != X509_V_OK) {
		ERR_clear_error();
		*error = std::string("TLS: server certificate verify failed: ") + X509_verify_cert_error_string(verdict);
		return TlsStep::kFailed;
	}
	std::string reason = QueueError();
	if (err == SSL_ERROR_SYSCALL && reason.empty()) {
		if (!SSL_is_init_finished(ssl)) {
			*error = std::string("TLS: the server closed the connection during the handshake ") + kTlsSilentHint;
			return TlsStep::kFailed;
		}
		if (rc == 0)
			return TlsStep::kClosed;
		*error = std::string("TLS: ") + strerror(errno);
		return TlsStep::kFailed;
	}
	if (!SSL_is_init_finished(ssl) &&
	    (reason == "wrong version number" || reason == "packet length too long" || reason == "record layer failure" ||
	     reason == "unexpected eof while reading")) {
		*error = "TLS: the server does not speak TLS on this port (" + reason + ")";
		return TlsStep::kFailed;
	}
	*error = "TLS: " + (reason.empty() ? std::string("error ") + std::to_string(err) : reason);
	return TlsStep::kFailed;
}

} // namespace

TlsSession::TlsSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsSession::~TlsSession() = default;

std::unique_ptr<TlsSession>
TlsSession::Open(const RedisTls &tls, const std::string &host, int fd, std::string *error)
{
	ERR_clear_error();
	auto impl = std::make_unique<Impl>();
	impl->verify = !tls.insecure;
	impl->ctx = SSL_CTX_new(TLS_client_method());
	if (!impl->ctx) {
		*error = "TLS: cannot create a context: " + QueueError();
		return nullptr;
	}
	SSL_CTX_set_min_proto_version(impl->ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(impl->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (impl->verify) {
		int ok = tls.cacert.empty() ? SSL_CTX_set_default_verify_paths(impl->ctx)
		                            : SSL_CTX_load_verify_locations(impl->ctx, tls.cacert.c_str(), nullptr);
		if (ok != 1) {
			*error = "TLS: cannot load the CA " + (tls.cacert.empty() ? std::string("store") : "file " + tls.cacert) + ": " +
			         QueueError();
			return nullptr;
		}
		SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER, nullptr);
	} else
		SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_NONE, nullptr);
	if (!tls.cert.empty()) {
		if (SSL_CTX_use_certificate_chain_file(impl->ctx, tls.cert.c_str()) != 1) {
			*error = "TLS: cannot load the client certificate " + tls.cert + ": " + QueueError();
			return nullptr;
		}
		if (SSL_CTX_use_PrivateKey_file(impl->ctx, tls.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(impl->ctx) != 1) {
			*error = "TLS: cannot use the client key " + tls.key + ": " + QueueError();
			return nullptr;
		}
	}
	impl->ssl = SSL_new(impl->ctx);
	if (!impl->ssl || SSL_set_fd(impl->ssl, fd) != 1) {
		*error = "TLS: cannot create a session: " + QueueError();
		return nullptr;
	}
	const std::string &name = tls.sni.empty() ? host : tls.sni;
	bool ip = IsIpAddress(name);
	if (!ip)
		SSL_set_tlsext_host_name(impl->ssl, name.c_str());
	if (impl->verify) {
		X509_VERIFY_PARAM *param = SSL_get0_param(impl->ssl);
		int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
		if (ok != 1) {
			*error = "TLS: cannot verify the name '" + name + "'";
			return nullptr;
		}
	}
	SSL_set_connect_state(impl->ssl);
	return std::unique_ptr<TlsSession>(new TlsSession(std::move(impl)));
}

TlsStep
TlsSession::Handshake(std::string *error)
{
	ERR_clear_error();
	int rc = SSL_do_handshake(impl_->ssl);
	if (rc == 1)
		return TlsStep::kDone;
	return Failure(impl_->ssl, rc, impl_->verify, error);
}

TlsStep
TlsSession::Read(char *buf, size_t cap, size_t *got, std::string *error)
{
	ERR_clear_error();
	size_t n = 0;
	int rc = SSL_read_ex(impl_->ssl, buf, cap, &n);
	if (rc == 1) {
		*got = n;
		return TlsStep::kDone;
	}
	*got = 0;
	return Failure(impl_->ssl, rc, impl_->verify, error);
}

TlsStep
TlsSession::Write(const char *buf, size_t len, size_t *put, std::string *error)
{
	ERR_clear_error();
	size_t n = 0;
	int rc = SSL_write_ex(impl_->ssl, buf, len, &n);
	if (rc == 1) {
		*put = n;
		return TlsStep::kDone;
	}
	*put = 0;
	return Failure(impl_->ssl, rc, impl_->verify, error);
}

} // namespace chat_outbox
