// daemon/src/metrics/outbox_status.hpp - the relay's figures on this daemon's /metrics
// (--outbox-status-url), for the extension's relay, which runs inside Postgres and serves no /metrics
// of its own (chat-outbox-relay has one: --metrics-listen).
//
// Every --outbox-status-interval it reads chat_outbox.partition_status (each partition's unsent rows
// and the oldest one's age) and the relay's state (relay_worker_status(), the state the status view
// shows) in one statement over its own connection, then each service's state (the status view's
// service_state) in a second; a read still running when the next is due is not doubled, so the cost is
// at most two statements per interval, whatever the scrapes. /metrics prints the
// last read (common/process/outbox_metrics.hpp: the names chat-outbox-relay prints) and whether it succeeded;
// after a failed read, only that.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/uv_timer.hpp"
#include "common/process/outbox_metrics.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

class OutboxStatus {
  public:
	OutboxStatus(uv_loop_t *loop, PgClient &pg, int64_t interval_ms);
	OutboxStatus(const OutboxStatus &) = delete;
	OutboxStatus &operator=(const OutboxStatus &) = delete;

	// Start reads at once, then every interval.
	void Start();
	// Close stops reading for good (shutdown); done runs once the timer is released.
	void Close(std::function<void()> done);
	// Render appends the series of the last read to /metrics.
	void Render(std::string *out) const;

  private:
	void Read();
	// ReadServiceStates reads each service's service_state, once the backlog is read.
	void ReadServiceStates();

	PgClient &pg_;
	int64_t interval_ms_;
	UvTimer timer_;
	enum class LastRead { kNone,
		                  kOk,
		                  kFailed }; // a change to or from kFailed is logged once
	bool reading_ = false;
	LastRead last_ = LastRead::kNone;
	std::string relay_state_;
	std::vector<chat_outbox::PartitionBacklog> rows_;
	std::vector<std::pair<std::string, std::string>> service_states_; // (service, service_state), by name
	std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);      // a reply after Close finds it false
};

} // namespace chat_outboxd
