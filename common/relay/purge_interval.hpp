// common/relay/purge_interval.hpp - how often a relay runs its purge round: one step of each outbox's
// rotation (sql/parts/outbox.sql, outbox_rotate) and the inbox purge. The in-database worker and
// chat-outbox-relay share it, so both modes rotate at the same pace for the same retention.
#pragma once

#include <cstdint>

namespace chat_outbox {

// kPurgeEveryMinMs, kPurgeEveryMaxMs: the purge round runs at least this often and at most this often.
constexpr int64_t kPurgeEveryMinMs = 1000;
constexpr int64_t kPurgeEveryMaxMs = 10000;

// PurgeIntervalMs: about twice per retention period, of the shorter retention in force (the outbox's
// or the inbox's, in seconds; 0 is none), within [kPurgeEveryMinMs, kPurgeEveryMaxMs]. Twice per
// period keeps a generation's rows at most about three retentions old: the oldest is truncated, and
// the current one switched, within half a retention of being due. With no retention in force (both 0,
// or negative): kPurgeEveryMaxMs.
int64_t PurgeIntervalMs(int64_t retention_s, int64_t inbox_retention_s) noexcept;

} // namespace chat_outbox
