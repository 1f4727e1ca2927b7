// daemon/src/consumer/core/job_message.hpp - what a job's `data` must hold to be a chat message.
//
// Anything else is a poison job: it goes to the failed set with the reason returned here, and
// the daemon goes on. The reason is precise ("chat_id missing"), because it is all an operator
// sees in the failed set.
#pragma once

#include <optional>
#include <string>

#include "inbox/core/delivery.hpp"
#include "inbox/core/uuid.hpp" // IsUuid, which callers of ParseMessage use too

namespace chat_outboxd {

// ParseMessage accepts {"id": uuid string, "chat_id": integer or integer string, "body": string,
// "created_at"?: ISO 8601 string, "sender"?: null or a user id (inbox/core/user_id.hpp)}. Other fields are ignored. On failure returns nullopt and sets
// *reason to "invalid message: <why>".
std::optional<ChatMessage> ParseMessage(const std::string &data, std::string *reason);

// The job names of an edit and a delete (edit_message / delete_message). Their data is a message's
// fields (a delete's body is ignored: it is stored empty) with "message_id": the changed message's uuid
// (the event's own "id" is the jobId), "version": 1 to 2^31-1 (the newest wins), "edited_at" / "deleted_at".
// Any other name is a message.
constexpr const char *kEditedJob = "message.edited";
constexpr const char *kDeletedJob = "message.deleted";
std::optional<ChatMessage> ParseMessage(const std::string &name, const std::string &data, std::string *reason);

} // namespace chat_outboxd
