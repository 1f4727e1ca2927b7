// daemon/src/consumer/core/job_message.hpp - what a job's `data` must hold to be a chat message.
//
// Anything else is a poison job: it goes to the failed set with the reason returned here, and
// the daemon goes on. The reason is precise ("chat_id missing"), because it is all an operator
// sees in the failed set.
#pragma once

#include <optional>
#include <string>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

// ParseMessage accepts {"id": uuid string, "chat_id": integer or integer string, "body": string,
// "created_at"?: ISO 8601 string, "sender"?: null or a user id (inbox/core/user_id.hpp)}. Other fields are ignored. On failure returns nullopt and sets
// *reason to "invalid message: <why>".
std::optional<ChatMessage> ParseMessage(const std::string &data, std::string *reason);

bool IsUuid(const std::string &s);


} // namespace chat_outboxd
