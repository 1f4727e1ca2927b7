// daemon/src/gateway/core/message_json.hpp - the message clients see, {id, chat_id, body, created_at, sender, seq},
// encoded for each client protocol. Built once per broadcast and shared by every socket in the room.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

// MessageObject: created_at is null when unknown, sender null for a message sent without one; seq is
// a JSON number.
nlohmann::json MessageObject(const InboxMessage &m);

// SocketIoMessageEvent is the Engine.IO text `42["message",{...},"<seq>"]`: the trailing string is
// the connection-state-recovery offset the client sends back on reconnect.
std::string SocketIoMessageEvent(const InboxMessage &m);

// PlainMessageFrame is `{"type":"message","message":{...}}`.
std::string PlainMessageFrame(const InboxMessage &m);

// JsonInteger reads an int64 given as a JSON integer or a string of digits (offsets and chat ids
// arrive both ways: the Socket.IO offset is a string).
bool JsonInteger(const nlohmann::json &v, int64_t *out);

// DumpJson never throws: invalid UTF-8 (which Postgres would not hand us) becomes U+FFFD.
std::string DumpJson(const nlohmann::json &j);

} // namespace chat_outboxd
