// relay/src/metrics_server.cpp - see metrics_server.hpp.
#include "metrics_server.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "common/process/listen_socket.hpp"

namespace chat_outbox::relay {

namespace {

int64_t
SteadyMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

constexpr int64_t kBacklogReuseMs = 1000;
constexpr size_t kMaxRequestBytes = 8192;

const char *
Reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	default:
		return "Bad Request";
	}
}

void
WriteAll(int fd, const std::string &data)
{
	size_t off = 0;
	while (off < data.size()) {
		ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
		if (n <= 0)
			return; // the scraper went away: nothing to do
		off += static_cast<size_t>(n);
	}
}

} // namespace

MetricsServer::~MetricsServer()
{
	stop_ = true;
	if (thread_.joinable())
		thread_.join();
	if (listen_fd_ >= 0)
		close(listen_fd_);
	if (conn_)
		PQfinish(conn_);
}

bool
MetricsServer::Start(const std::string &listen, std::string *error)
{
	listen_fd_ = OpenListenSocket(listen, error);
	if (listen_fd_ < 0)
		return false;
	// the thread starts with every signal blocked: SIGTERM and SIGINT must interrupt the relay loop's waits
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	thread_ = std::thread([this] { Run(); });
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	return true;
}

void
MetricsServer::Publish(const RelayFigures &figures)
{
	std::lock_guard<std::mutex> lock(mu_);
	figures_ = figures;
}

void
MetricsServer::Run()
{
	while (!stop_) {
		pollfd p = {listen_fd_, POLLIN, 0};
		if (poll(&p, 1, 200) <= 0)
			continue;
		int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		try {
			Answer(fd);
		} catch (const std::exception &) {
			// out of memory for one answer: that scrape fails, the relay and the next scrape go on
		}
		close(fd);
	}
}

void
MetricsServer::Answer(int fd)
{
	// read the request head (a scraper sends no body), at most kMaxRequestBytes, 2 s at most per read
	timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	std::string head;
	char buf[1024];
	while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxRequestBytes) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n <= 0)
			return;
		head.append(buf, static_cast<size_t>(n));
	}
	std::string line = head.substr(0, head.find("\r\n"));
	int status = MetricsRequestStatus(line);
	std::string body, type = "text/plain; charset=utf-8";
	if (status == 200) {
		RelayFigures figures;
		{
			std::lock_guard<std::mutex> lock(mu_);
			figures = figures_;
		}
		body = RenderRelayMetrics(figures, ReadBacklog());
		type = "text/plain; version=0.0.4; charset=utf-8";
	} else {
		body = std::string(Reason(status)) + "\n";
	}
	bool head_only = line.compare(0, 5, "HEAD ") == 0;
	std::string response = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\nContent-Type: " + type +
	                       "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
	if (!head_only)
		response += body;
	WriteAll(fd, response);
}

BacklogRead
MetricsServer::ReadBacklog()
{
	int64_t now = SteadyMs();
	if (last_read_ms_ >= 0 && now - last_read_ms_ < kBacklogReuseMs)
		return last_read_;
	last_read_ms_ = now;
	last_read_ = BacklogRead{};
	if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
		if (conn_)
			PQfinish(conn_);
		// dbname first and expanded: the keywords after it win over what the URI says
		const char *keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
		const char *values[] = {conninfo_.c_str(), "5", "chat-outbox-relay metrics", nullptr};
		conn_ = PQconnectdbParams(keys, values, 1);
		PGresult *r = PQexec(conn_, "SET statement_timeout = '5s'");
		bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		PQclear(r);
		if (!ok) {
			PQfinish(conn_);
			conn_ = nullptr;
			return last_read_;
		}
	}
	PGresult *r = PQexec(conn_, "SELECT service, partition, queue, unsent, "
	                            "coalesce(extract(epoch FROM oldest_unsent_age), 0)::float8 "
	                            "FROM chat_outbox.partition_status ORDER BY service, partition");
	if (PQresultStatus(r) == PGRES_TUPLES_OK) {
		last_read_.ok = true;
		for (int i = 0; i < PQntuples(r); i++) {
			PartitionBacklog row;
			row.service = PQgetvalue(r, i, 0);
			row.partition = std::strtoll(PQgetvalue(r, i, 1), nullptr, 10);
			row.queue = PQgetvalue(r, i, 2);
			row.unsent = std::strtoll(PQgetvalue(r, i, 3), nullptr, 10);
			row.oldest_unsent_seconds = std::strtod(PQgetvalue(r, i, 4), nullptr);
			last_read_.rows.push_back(std::move(row));
		}
	}
	PQclear(r);
	return last_read_;
}

} // namespace chat_outbox::relay
