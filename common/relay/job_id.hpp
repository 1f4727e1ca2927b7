// common/relay/job_id.hpp - which BullMQ job id an outbox row gets.
//
// The contract (docs/architecture.md) is jobId = payload.id, the message uuid, so a re-sent row
// is a BullMQ duplicate rather than a second job. Redis accepts any id, but BullMQ breaks on some
// (docs/protocols/bullmq.md, 'Job ids') and some would name the queue's own keys;
// common/bullmq/queue_keys.hpp says which are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace chat_outbox {

// ChooseJobId returns payload_id when bullmq::IsValidJobId accepts it; otherwise a stable id
// derived from the outbox row, "outbox-<service>-<outbox id>" (it has digits, so it never names a
// queue key), so a row inserted by hand without a usable id is still relayed exactly once per id.
std::string ChooseJobId(const char *payload_id, std::string_view service, int64_t outbox_id);

} // namespace chat_outbox
