// relay/src/core/relay_metrics.cpp - see relay_metrics.hpp.
#include "core/relay_metrics.hpp"

#include "common/process/prometheus_text.hpp"

namespace chat_outbox::relay {

namespace {

constexpr RelayState kStates[] = {RelayState::kStarting, RelayState::kRunning, RelayState::kBackingOff,
                                  RelayState::kPostgresDown, RelayState::kStopping};

} // namespace

const char *
RelayStateName(RelayState s)
{
	switch (s) {
	case RelayState::kStarting:
		return "starting";
	case RelayState::kRunning:
		return "running";
	case RelayState::kBackingOff:
		return "backing off";
	case RelayState::kPostgresDown:
		return "waiting for postgres";
	case RelayState::kStopping:
		return "stopping";
	}
	return "unknown";
}

std::string
RenderRelayMetrics(const RelayFigures &f, const BacklogRead &backlog)
{
	std::string out;
	std::vector<std::string> states;
	for (RelayState s : kStates)
		states.push_back(RelayStateName(s));
	RenderStateSet(&out, "chat_outbox_relay_state",
	               "The relay's state, as the label: 1 for the current one (a stopped relay shows none).", states,
	               RelayStateName(f.state));
	MetricSample(&out, "chat_outbox_relay_last_pass_timestamp_seconds",
	             "When the relay's last round of passes ended (Unix time; 0 before the first).", "gauge",
	             f.last_pass_unix);
	MetricSample(&out, "chat_outbox_relay_rounds_total", "Rounds of passes (every service once) run by this process.",
	             "counter", static_cast<double>(f.rounds));
	MetricHeader(&out, "chat_outbox_relay_relayed_total", "Outbox rows this process added to Redis, per service.",
	             "counter");
	for (const auto &[service, n] : f.relayed)
		MetricLine(&out, "chat_outbox_relay_relayed_total", {{"service", service}}, static_cast<double>(n));
	MetricSample(&out, "chat_outbox_relay_postgres_up", "1 while the relay's Postgres connection is up.", "gauge",
	             f.postgres_up ? 1 : 0);
	MetricHeader(&out, "chat_outbox_relay_redis_up",
	             "1 while the Redis shard answers the relay (shard as in --redis-url, 0 first).", "gauge");
	for (size_t s = 0; s < f.redis_up.size(); s++)
		MetricLine(&out, "chat_outbox_relay_redis_up", {{"shard", std::to_string(s)}}, f.redis_up[s] ? 1 : 0);
	MetricSample(&out, "chat_outbox_relay_redis_durable",
	             "0 while Redis (shard 0) runs without appendonly, with appendfsync no, or may evict jobs (the status "
	             "view's redis_warning); 1 otherwise and before the relay first connected.",
	             "gauge", f.redis_durable ? 1 : 0);
	MetricSample(&out, "chat_outbox_relay_postgres_reconnects_total",
	             "Times the relay's lost Postgres connection came back.", "counter",
	             static_cast<double>(f.postgres_reconnects));
	MetricSample(&out, "chat_outbox_relay_redis_reconnects_total", "Times a Redis shard that had failed came back.",
	             "counter", static_cast<double>(f.redis_reconnects));
	MetricSample(&out, "chat_outbox_relay_backlog_read_ok",
	             "1 when this scrape read chat_outbox.partition_status (the backlog series follow), 0 when it failed.",
	             "gauge", backlog.ok ? 1 : 0);
	if (backlog.ok)
		RenderBacklog(backlog.rows, &out);
	return out;
}

int
MetricsRequestStatus(const std::string &request_line)
{
	size_t sp1 = request_line.find(' ');
	if (sp1 == std::string::npos || sp1 == 0)
		return 400;
	size_t sp2 = request_line.find(' ', sp1 + 1);
	if (sp2 == std::string::npos || request_line.compare(sp2 + 1, 5, "HTTP/") != 0)
		return 400;
	std::string method = request_line.substr(0, sp1);
	std::string target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
	std::string path = target.substr(0, target.find('?'));
	if (path != "/metrics")
		return 404;
	return method == "GET" || method == "HEAD" ? 200 : 405;
}

} // namespace chat_outbox::relay
