// daemon/src/metrics/outbox_status.cpp - see outbox_status.hpp.
#include "metrics/outbox_status.hpp"

#include <cstdlib>

#include "base/log.hpp"
#include "common/process/prometheus_text.hpp"

namespace chat_outboxd {

using chat_outbox::MetricSample;

namespace {

// One row per partition, the relay's state on each (and one row with NULLs when there is no service).
constexpr const char kRead[] =
    "SELECT w.state, p.service, p.partition, p.queue, p.unsent, "
    "coalesce(extract(epoch FROM p.oldest_unsent_age), 0)::float8 "
    "FROM chat_outbox.relay_worker_status() w LEFT JOIN chat_outbox.partition_status p ON true "
    "ORDER BY p.service, p.partition";

// The status view's relay_state values (docs/extension.md, docs/managed.md): each exported, the current one as 1.
const std::vector<std::string> kViewStates = {"running", "backing off", "paused", "waiting for extension",
                                              "waiting for database", "standby", "starting", "stopped"};

// Each service's state as the status view's service_state (chat_outbox.service_state, 1.6 on; before, the
// statement fails and the series is left out): read after the backlog, over the same connection.
constexpr const char kServiceStates[] =
    "SELECT s.name, chat_outbox.service_state(w.state, r.service_error, r.layout_change) "
    "FROM chat_outbox.services s CROSS JOIN chat_outbox.relay_worker_status() w "
    "LEFT JOIN chat_outbox.relay_service_status() r ON r.service = s.name ORDER BY s.name";

// service_state's values besides relay_state's
const std::vector<std::string> kServiceOnlyStates = {"failing", "waiting for the layout"};

} // namespace

OutboxStatus::OutboxStatus(uv_loop_t *loop, PgClient &pg, int64_t interval_ms)
    : pg_(pg), interval_ms_(interval_ms), timer_(loop, "outbox status")
{
}

void
OutboxStatus::Start()
{
	timer_.Start(
	    0, [this] { Read(); }, static_cast<uint64_t>(interval_ms_));
}

void
OutboxStatus::Close(std::function<void()> done)
{
	*alive_ = false;
	timer_.Close(std::move(done));
}

void
OutboxStatus::Read()
{
	if (reading_)
		return;
	// Until its connection is first up there is nothing to read, and a failed read logged now would blame
	// the role (the hint below) at every start: the first read waits for the connection.
	if (last_ == LastRead::kNone && !pg_.Connected())
		return;
	reading_ = true;
	std::weak_ptr<bool> alive = alive_;
	pg_.Query(kRead, {}, [this, alive](PgResult &&r) {
		auto a = alive.lock();
		if (!a || !*a)
			return;
		reading_ = false;
		if (!r.ok) {
			if (last_ != LastRead::kFailed)
				Log(Level::Warning, "outbox status: cannot read chat_outbox.partition_status: %s (--outbox-status-url "
				                    "must reach a role that may read every service's outbox)",
				    r.error.c_str());
			last_ = LastRead::kFailed;
			rows_.clear();
			return;
		}
		if (last_ == LastRead::kFailed)
			Log(Level::Notice, "outbox status: reading chat_outbox.partition_status again");
		last_ = LastRead::kOk;
		rows_.clear();
		relay_state_.clear();
		for (const auto &row : r.rows) {
			if (row.size() < 6)
				continue;
			relay_state_ = row[0].value_or("");
			if (!row[1])
				continue;
			chat_outbox::PartitionBacklog b;
			b.service = *row[1];
			b.partition = std::strtoll(row[2].value_or("0").c_str(), nullptr, 10);
			b.queue = row[3].value_or("");
			b.unsent = std::strtoll(row[4].value_or("0").c_str(), nullptr, 10);
			b.oldest_unsent_seconds = std::strtod(row[5].value_or("0").c_str(), nullptr);
			rows_.push_back(std::move(b));
		}
		ReadServiceStates();
	});
}

void
OutboxStatus::ReadServiceStates()
{
	std::weak_ptr<bool> alive = alive_;
	reading_ = true;
	pg_.Query(kServiceStates, {}, [this, alive](PgResult &&r) {
		auto a = alive.lock();
		if (!a || !*a)
			return;
		reading_ = false;
		service_states_.clear();
		if (!r.ok)
			return; // an install before 1.6: no service_state to show
		for (const auto &row : r.rows)
			if (row.size() >= 2 && row[0] && row[1])
				service_states_.emplace_back(*row[0], *row[1]);
	});
}

void
OutboxStatus::Render(std::string *out) const
{
	MetricSample(out, "chat_outboxd_outbox_status_read_ok",
	             "1 when the last read of the status views (--outbox-status-url) succeeded; the relay's series follow.",
	             "gauge", last_ == LastRead::kOk ? 1 : 0);
	if (last_ != LastRead::kOk)
		return;
	chat_outbox::RenderStateSet(out, "chat_outbox_relay_state",
	                            "The relay's state as the status view shows it (relay_state), as the label: 1 for the "
	                            "current one.",
	                            kViewStates, relay_state_);
	chat_outbox::RenderBacklog(rows_, out);
	if (service_states_.empty())
		return;
	std::vector<std::string> states = kViewStates;
	states.insert(states.end(), kServiceOnlyStates.begin(), kServiceOnlyStates.end());
	chat_outbox::MetricHeader(out, "chat_outbox_relay_service_state",
	                          "The relay's state for each service as the status view shows it (service_state): "
	                          "1 for the current one; a relay that cannot relay a service is not running for it.",
	                          "gauge");
	for (const auto &[service, current] : service_states_)
		for (const auto &state : states)
			chat_outbox::MetricLine(out, "chat_outbox_relay_service_state", {{"service", service}, {"state", state}},
			                        state == current ? 1 : 0);
}

} // namespace chat_outboxd
