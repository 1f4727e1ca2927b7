// common/process/outbox_metrics.hpp - the outbox's series, as chat-outbox-relay's /metrics and chat-outboxd's
// (--outbox-status-url) both print them, so one rule and one dashboard read either: the backlog
// per partition (chat_outbox.partition_status) and a relay state as one gauge per state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chat_outbox {

// One row of chat_outbox.partition_status.
struct PartitionBacklog {
	std::string service;
	int64_t partition = 0;
	std::string queue;
	int64_t unsent = 0;
	double oldest_unsent_seconds = 0; // 0 when nothing waits
};

// RenderBacklog appends chat_outbox_unsent and chat_outbox_oldest_unsent_seconds, one sample per row
// labelled service, partition and queue.
void RenderBacklog(const std::vector<PartitionBacklog> &rows, std::string *out);

// RenderStateSet appends the gauge `name` with one sample per state, labelled state="<it>": 1 for
// `current`, 0 for the others; a current state not in the list gets its own sample (a newer peer's).
void RenderStateSet(std::string *out, const char *name, const char *help, const std::vector<std::string> &states,
                    const std::string &current);

} // namespace chat_outbox
