// common/process/outbox_metrics.cpp - see outbox_metrics.hpp.
#include "common/process/outbox_metrics.hpp"

#include <algorithm>

#include "common/process/prometheus_text.hpp"

namespace chat_outbox {

void
RenderBacklog(const std::vector<PartitionBacklog> &rows, std::string *out)
{
	auto labels = [](const PartitionBacklog &r) {
		return std::vector<MetricLabel>{{"service", r.service}, {"partition", std::to_string(r.partition)}, {"queue", r.queue}};
	};
	MetricHeader(out, "chat_outbox_unsent", "Outbox rows waiting to be relayed, per partition (refused rows not counted).",
	             "gauge");
	for (const auto &r : rows)
		MetricLine(out, "chat_outbox_unsent", labels(r), static_cast<double>(r.unsent));
	MetricHeader(out, "chat_outbox_oldest_unsent_seconds",
	             "Age of the oldest outbox row waiting to be relayed, per partition (0 when none waits).", "gauge");
	for (const auto &r : rows)
		MetricLine(out, "chat_outbox_oldest_unsent_seconds", labels(r), r.oldest_unsent_seconds);
}

void
RenderStateSet(std::string *out, const char *name, const char *help, const std::vector<std::string> &states,
               const std::string &current)
{
	MetricHeader(out, name, help, "gauge");
	for (const auto &s : states)
		MetricLine(out, name, {{"state", s}}, s == current ? 1 : 0);
	if (!current.empty() && std::find(states.begin(), states.end(), current) == states.end())
		MetricLine(out, name, {{"state", current}}, 1);
}

} // namespace chat_outbox
