// daemon/src/gateway/client/core/message_json.hpp - the message clients see, {id, chat_id, body, created_at, sender, seq},
// encoded for each client protocol. Built once per broadcast and shared by every socket in the room.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

// MessageObject: created_at is null when unknown, sender null for a message sent without one; seq is
// a JSON number; AddChangeFields as below.
nlohmann::json MessageObject(const InboxMessage &m);

// AddChangeFields: a message's current state, only when changed: "edited_at" when edited; when
// deleted "deleted_at" and a null "body" (its text is gone).
void AddChangeFields(nlohmann::json &m, const std::string &edited_at, const std::string &deleted_at);

// EventName: what a row is to clients: "message", "message_edited" {id, chat_id, body, edited_at,
// sender, seq} or "message_deleted" {id, chat_id, deleted_at, seq}; the id is the changed message's.
// An edit of a message deleted since is shown as its delete (the inbox no longer has its body).
const char *EventName(const InboxMessage &m);
nlohmann::json EventObject(const InboxMessage &m);

// SocketIoMessageEvent is the Engine.IO text `42["<EventName>",{...},"<seq>"]`: the trailing string is
// the connection-state-recovery offset the client sends back on reconnect.
std::string SocketIoMessageEvent(const InboxMessage &m);

// PlainMessageFrame is `{"type":"<EventName>","message":{...}}`.
std::string PlainMessageFrame(const InboxMessage &m);

// JsonInteger reads an int64 given as a JSON integer or a string of digits (offsets and chat ids
// arrive both ways: the Socket.IO offset is a string).
bool JsonInteger(const nlohmann::json &v, int64_t *out);

// DumpJson never throws: invalid UTF-8 (which Postgres would not hand us) becomes U+FFFD.
std::string DumpJson(const nlohmann::json &j);

} // namespace chat_outboxd
