// daemon/src/gateway/conversation/core/history.hpp - one history page from the two kinds of messages a side has in
// a chat: received (its inbox, paged by seq) and sent (its messages table, paged by (created_at, id)).
// Each kind is taken newest first and only as a prefix, so the next page starts exactly where this one
// stopped, per kind: no message is skipped or given twice (docs/client-protocol.md, "History").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/conversation/core/conversation.hpp"

namespace chat_outboxd {

struct HistoryRow {
	std::string id;
	int64_t chat_id = 0;
	std::string body;
	std::optional<std::string> created_at;            // ISO 8601 as the gateway prints it; unknown for some received rows
	std::optional<std::string> sender;                // the author; none for a message sent without one
	std::optional<std::string> edited_at, deleted_at; // its current state: edited, deleted (body '')
	int64_t seq = 0;                                  // received rows only
	int64_t time_us = 0;                              // the merge's time: created_at, else received_at (microseconds)
};

// What the database returned for one kind: rows newest first, and whether they are all there are
// before the cursor (the query was not cut by its row or byte limit).
struct HistoryKind {
	std::vector<HistoryRow> rows;
	bool complete = false;
};

struct HistoryPage {
	nlohmann::json messages = nlohmann::json::array(); // newest first, each with "dir"
	std::optional<int64_t> next_before_seq;
	std::optional<conv::SentCursor> next_before_sent;
	bool more = false;
};

// MergeHistory takes the newest of both kinds, newest first by time (a tie goes to the received one),
// until `limit` messages or the one whose body takes the page to max_bytes (always at least one).
// A kind whose fetched rows ran out but that is not complete ends the page, so it is never overtaken.
HistoryPage MergeHistory(const conv::HistoryRequest &req, const HistoryKind &received, const HistoryKind &sent,
                         size_t max_bytes);

// The JSON of the page's ack: {ok:true, chat_id, messages, next:{before_seq, before_sent}, more}.
nlohmann::json HistoryResult(int64_t chat_id, const HistoryPage &page);

} // namespace chat_outboxd
