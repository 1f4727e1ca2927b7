// daemon/src/inbox/core/delivery.hpp - the inbox's messages: what a write takes (ChatMessage, read from
// a job), what a committed row is (InboxMessage), and who the rows are handed to (MessageSink).
//
// The consumer calls Deliver() only with messages whose inbox rows are committed and new
// (not duplicates), in inbox `seq` order. The gateway pushes them to the rooms chat:<chat_id>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chat_outboxd {

// A row of the inbox is a message, or an edit or delete of one (docs/architecture.md, "Edits and
// deletes"): the jobs message.edited and message.deleted.
enum class Change : char { None,
	                       Edited,
	                       Deleted };

struct ChatMessage {
	std::string id; // uuid, lower-case as given; for an edit or delete the event's own id
	int64_t chat_id = 0;
	std::string body;
	std::optional<std::string> created_at; // ISO 8601, only when it looks like one
	std::optional<std::string> sender;     // the author (send_message's sender), when the payload has one
	Change change = Change::None;
	std::string target;                    // an edit's or delete's message id (uuid, lower-case)
	int64_t version = 0;                   // an edit's or delete's version: the newest wins
	std::optional<std::string> changed_at; // an edit's edited_at or a delete's deleted_at, ISO 8601
};

struct InboxMessage {
	int64_t seq = 0; // <service>.inbox.seq: the offset clients resume from
	std::string id;  // message uuid = BullMQ jobId = inbox key
	int64_t chat_id = 0;
	std::string body;
	std::string created_at;            // sender's time, ISO 8601 as Postgres prints it (may be empty)
	std::optional<std::string> sender; // the author, NULL for a message sent without one
	// An event row (edit or delete) names its message in target. edited_at / deleted_at are the state
	// of the message after it (empty when not edited / not deleted); a deleted message's body is empty.
	Change change = Change::None;
	std::string target;
	std::string edited_at, deleted_at;
	// Another writer committed this row, and this daemon saw it in its inbox write: that writer publishes it
	// on the bus, so this daemon does not (a writer that died before publishing leaves a gap the gateways
	// fill from the inbox).
	bool other_writer = false;
};

class MessageSink {
  public:
	virtual ~MessageSink() = default;
	virtual void Deliver(const std::vector<InboxMessage> &messages) = 0;
};

} // namespace chat_outboxd
