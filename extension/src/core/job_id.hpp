// extension/src/core/job_id.hpp - which BullMQ job id an outbox row gets.
//
// The contract (docs/architecture.md) is jobId = payload.id, the message uuid, so a re-sent row
// is a BullMQ duplicate rather than a second job. Redis accepts any id, but BullMQ breaks on some
// (docs/protocols/bullmq.md, 'Job ids'), so ids are checked here before they reach Redis.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outbox {

// IsValidJobId: non-empty, at most 200 bytes, only [A-Za-z0-9._-], and not integer-like (an
// integer would collide with BullMQ's auto ids). That also rules out ':' and the "0:" form.
bool IsValidJobId(std::string_view id);

// ChooseJobId returns payload_id when it is valid; otherwise a stable id derived from the outbox
// row, "outbox-<service>-<outbox id>", so a row inserted by hand without a usable id is still
// relayed exactly once per id instead of blocking the outbox.
std::string ChooseJobId(const char *payload_id, std::string_view service, int64_t outbox_id);

} // namespace chat_outbox

