// daemon/src/gateway/http/head_reader.cpp - see head_reader.hpp.
#include "gateway/http/head_reader.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/log.hpp"
#include "gateway/http/core/http_request.hpp"

namespace chat_outboxd {

// One accepted connection not handed on yet: its head being read (peeked), or, once answered, what it
// still sends being read until it closes (Draining).
struct HeadReader::Pending {
	enum class State : uint8_t { Reading,
		                         Draining };
	explicit Pending(int f) : fd(f), poll("gateway: a request head") {}
	int fd;
	State state = State::Reading;
	size_t drained = 0;
	uint64_t deadline = 0; // uv_now() milliseconds
	UvPoll poll;
};

HeadReader::HeadReader(uv_loop_t *loop, const char *name)
    : loop_(loop), name_(name), listen_poll_("gateway: a listener"), tick_(loop, "gateway: request head deadlines"),
      retry_(loop, "gateway: accept retry")
{
}

HeadReader::~HeadReader() { Close(); }

bool
HeadReader::Start(int listen_fd, Handoff handoff)
{
	if (!listen_poll_.Open(loop_, listen_fd))
		return false;
	listen_fd_ = listen_fd;
	handoff_ = std::move(handoff);
	SetListenState(ListenState::Accepting);
	tick_.Start(
	    1000, [this] { OnTick(); }, 1000);
	return true;
}

void
HeadReader::Close()
{
	listen_state_ = ListenState::Closed;
	listen_poll_.Close();
	retry_.Close();
	tick_.Close();
	if (listen_fd_ >= 0)
		close(listen_fd_);
	listen_fd_ = -1;
	for (auto &[ptr, p] : pending_) {
		p->poll.Close(); // libuv stops watching the descriptor at once; then it may be closed
		close(p->fd);
	}
	pending_.clear();
}

// Each change of the listener's state is logged once: accept failing (retried every second, e.g. out of
// descriptors) and back. Full (the kernel's backlog holds new connections until a head is in or
// given up on) comes and goes with each connection while slow clients hold every place, so it is
// logged at most once a minute, with how often it filled since.
void
HeadReader::SetListenState(ListenState s, const char *why)
{
	ListenState was = listen_state_;
	if (s == was || (was == ListenState::Closed && s != ListenState::Accepting))
		return;
	listen_state_ = s;
	if (was == ListenState::Failing)
		retry_.Stop();
	switch (s) {
	case ListenState::Accepting:
		if (was == ListenState::Failing)
			Log(Level::Notice, "gateway: %s accepts connections again", name_);
		listen_poll_.Start(UV_READABLE, [this](int status, int) {
			if (status == 0)
				OnAcceptable();
		});
		break;
	case ListenState::Full:
		listen_poll_.Stop();
		times_full_++;
		if (full_logged_at_ == 0 || uv_now(loop_) - full_logged_at_ >= 60000) {
			Log(Level::Warning,
			    "gateway: %s: %zu connections are sending their request heads; new ones wait (full %llu time(s) "
			    "since the last such line)",
			    name_, pending_.size(), static_cast<unsigned long long>(times_full_));
			full_logged_at_ = uv_now(loop_);
			times_full_ = 0;
		}
		break;
	case ListenState::Failing:
		listen_poll_.Stop();
		Log(Level::Warning, "gateway: %s cannot accept connections (%s); retrying every second", name_, why);
		retry_.Start(
		    1000, [this] { OnAcceptable(); }, 1000);
		break;
	case ListenState::Closed:
		break;
	}
}

void
HeadReader::OnAcceptable()
{
	while (listen_state_ == ListenState::Accepting || listen_state_ == ListenState::Failing) {
		if (pending_.size() >= kMaxPendingHeads) {
			SetListenState(ListenState::Full);
			return;
		}
		int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				SetListenState(ListenState::Failing, std::strerror(errno));
			return;
		}
		if (listen_state_ == ListenState::Failing)
			SetListenState(ListenState::Accepting);
		// What libwebsockets' own listener sets on a connection it accepts: frames leave at once.
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		auto owned = std::make_unique<Pending>(fd);
		Pending &p = *owned;
		if (!p.poll.Open(loop_, fd)) {
			close(fd);
			continue;
		}
		p.deadline = uv_now(loop_) + kHeadTimeoutMs;
		pending_.emplace(&p, std::move(owned));
		// A client on a fast path has often sent its head by now: looked at at once, it is handed on
		// without the socket ever being watched here.
		if (!OnReadable(p, 0))
			continue;
		p.poll.Start(UV_READABLE | UV_DISCONNECT, [this, &p](int status, int events) {
			if (status < 0)
				Drop(p);
			else
				OnReadable(p, events);
		});
	}
}

// The head is peeked, not read: it stays in the socket for libwebsockets, which reads it as from any
// connection it accepted itself, and the only copy of it is scratch_, one per listener. SO_RCVLOWAT asks
// the kernel to report the socket readable again only once more than what was peeked is there.
bool
HeadReader::OnReadable(Pending &p, int events)
{
	if (p.state == Pending::State::Draining) {
		char buf[4096];
		for (;;) {
			ssize_t n = recv(p.fd, buf, sizeof buf, 0);
			if (n > 0 && (p.drained += static_cast<size_t>(n)) <= kDrainBytes)
				continue;
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return true;
			Drop(p); // closed by the client, failed, or sent too much after the answer
			return false;
		}
	}
	ssize_t n = recv(p.fd, scratch_.data(), scratch_.size(), MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return true;
	if (n <= 0) {
		Drop(p);
		return false;
	}
	switch (http::ScanHead(std::string_view(scratch_.data(), static_cast<size_t>(n)))) {
	case http::HeadScan::Incomplete: {
		// A client that stopped sending (half-closed) before its head ended is gone.
		if (events & UV_DISCONNECT) {
			Drop(p);
			return false;
		}
		int more = static_cast<int>(n) + 1;
		setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &more, sizeof more);
		return true;
	}
	case http::HeadScan::TooLarge:
		return Answer(p, 431, "Request Header Fields Too Large", "request header fields too large\n");
	case http::HeadScan::BadTarget:
		return Answer(p, 400, "Bad Request", "bad request target\n");
	case http::HeadScan::Whole:
		break;
	}
	int fd = p.fd;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
	p.poll.Close();     // libuv stops watching the descriptor now, so libwebsockets may watch it next
	pending_.erase(&p); // p and its poll are gone from here on
	if (listen_state_ == ListenState::Full)
		SetListenState(ListenState::Accepting);
	handoff_(fd);
	return false;
}

// Answer sends a whole response (a fresh connection's send buffer takes it), ends the sending side and
// reads on until the client closes, for at most kDrainMs and kDrainBytes.
bool
HeadReader::Answer(Pending &p, int status, const char *reason, const char *body)
{
	std::string r = "HTTP/1.1 " + std::to_string(status) + " " + reason +
	                "\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: " + std::to_string(std::strlen(body)) +
	                "\r\nConnection: close\r\n\r\n" + body;
	Log(Level::Debug, "gateway: %s: answered %d to a request head", name_, status);
	if (send(p.fd, r.data(), r.size(), MSG_NOSIGNAL) < 0) {
		Drop(p);
		return false;
	}
	shutdown(p.fd, SHUT_WR);
	int one = 1;
	setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
	p.state = Pending::State::Draining;
	p.deadline = uv_now(loop_) + kDrainMs;
	return true;
}

void
HeadReader::Drop(Pending &p)
{
	p.poll.Close();
	close(p.fd);
	pending_.erase(&p);
	if (listen_state_ == ListenState::Full)
		SetListenState(ListenState::Accepting);
}

void
HeadReader::OnTick()
{
	uint64_t now = uv_now(loop_);
	std::vector<Pending *> due;
	for (auto &[ptr, p] : pending_)
		if (p->deadline <= now)
			due.push_back(ptr);
	for (Pending *p : due) {
		if (p->state == Pending::State::Reading)
			Answer(*p, 408, "Request Timeout", "request timeout\n");
		else
			Drop(*p);
	}
}

} // namespace chat_outboxd
