// relay/src/core/relay_metrics.hpp - what chat-outbox-relay's /metrics shows (--metrics-listen), and the
// Prometheus text of it (common/process/prometheus_text.hpp, the daemon's writer).
//
// The relay loop keeps RelayFigures (its state, passes, relayed counts, connections); the backlog per
// partition is read from chat_outbox.partition_status when a scrape asks (metrics_server.cpp). This file
// only turns both into text, so it is tested without servers. Names and labels are a contract:
// deploy/prometheus/chat-outbox.rules.yml and deploy/grafana/chat-outbox.json use them, and
// the backlog series (chat_outbox_unsent, chat_outbox_oldest_unsent_seconds) carry the same names as
// the ones chat-outboxd exports from the status view (--outbox-status-url).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/process/outbox_metrics.hpp"

namespace chat_outbox::relay {

// The relay process's state. Not the status view's relay_state (which a silent relay turns into
// "stopped"): this is what the process itself is doing.
enum class RelayState {
	kStarting,     // before its first round
	kRunning,      // rounds go through
	kBackingOff,   // Redis (shard 0) failing: rows wait, retried with backoff
	kPostgresDown, // its Postgres connection lost: reconnecting with backoff
	kStopping,     // SIGTERM or SIGINT: finishing the pass in progress
};

// RelayStateName: the state label's value ("starting", "running", "backing off", "waiting for postgres",
// "stopping"); every state is exported, the current one as 1.
const char *RelayStateName(RelayState s);

struct RelayFigures {
	RelayState state = RelayState::kStarting;
	double last_pass_unix = 0;               // when the last round ended (Unix seconds); 0 = none yet
	uint64_t rounds = 0;                     // rounds run
	std::map<std::string, uint64_t> relayed; // per service: rows added to Redis by this process
	bool postgres_up = false;                // the relay's own connection
	std::vector<bool> redis_up;              // per shard (--redis-url order)
	bool redis_durable = true;               // false while shard 0 has a durability warning (redis_warning)
	uint64_t postgres_reconnects = 0;        // a lost connection back
	uint64_t redis_reconnects = 0;           // a shard that had failed back (shard 0's outage included)
};

struct BacklogRead {
	bool ok = false;                                 // the last read succeeded
	std::vector<chat_outbox::PartitionBacklog> rows; // as of that read
};

// RenderRelayMetrics: the /metrics body. The backlog series only when the read succeeded.
std::string RenderRelayMetrics(const RelayFigures &f, const BacklogRead &backlog);

// MetricsRequestStatus: the answer to a request line: 200 for "GET /metrics" or "HEAD /metrics" (a query
// string ignored), 405 for another method there, 404 for another path, 400 for a line that is not HTTP.
int MetricsRequestStatus(const std::string &request_line);

} // namespace chat_outbox::relay
