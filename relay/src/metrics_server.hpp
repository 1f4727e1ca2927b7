// relay/src/metrics_server.hpp - chat-outbox-relay's /metrics listener (--metrics-listen host:port).
//
// One thread of its own, so a scrape is answered while the relay loop waits on Redis or a row lock: it
// accepts a connection at a time, answers GET /metrics (HTTP/1.1, Connection: close) and nothing else.
// The loop publishes its figures (core/relay_metrics.hpp) after every change; the backlog per partition
// is read from chat_outbox.partition_status over this thread's own Postgres connection when a scrape
// asks, at most once a second (a faster scraper gets the last read), each read bounded by a 5 s
// statement_timeout. Signals stay with the relay loop's thread.
#pragma once

#include <libpq-fe.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "core/relay_metrics.hpp"

namespace chat_outbox::relay {

class MetricsServer {
  public:
	explicit MetricsServer(std::string conninfo) : conninfo_(std::move(conninfo)) {}
	~MetricsServer();
	MetricsServer(const MetricsServer &) = delete;
	MetricsServer &operator=(const MetricsServer &) = delete;

	// Start listens on host:port and starts the thread; false with *error when it cannot listen.
	bool Start(const std::string &listen, std::string *error);
	// Publish replaces the figures the next scrape shows.
	void Publish(const RelayFigures &figures);

  private:
	void Run();
	void Answer(int fd);
	BacklogRead ReadBacklog();

	std::string conninfo_;
	int listen_fd_ = -1;
	std::atomic<bool> stop_{false};
	std::thread thread_;
	std::mutex mu_;
	RelayFigures figures_; // under mu_
	// the thread's own
	PGconn *conn_ = nullptr;
	BacklogRead last_read_;
	int64_t last_read_ms_ = -1;
};

} // namespace chat_outbox::relay
