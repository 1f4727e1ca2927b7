// daemon/src/bus/core/bus_codec.hpp - the payload of a bus message (docs/architecture.md,
// "The bus").
//
// One PUBLISH carries the rows of one delivery, in seq order, after a header with the publisher's
// clock (for the bus lag figure):
//     cobus1 <published_ms>\n
//     r <seq> <chat_id> <id bytes> <created_at bytes> <body bytes>\n<id><created_at><body>   a full row
//     s <seq> <chat_id> <id bytes> <created_at bytes> <body bytes> <sender bytes>\n<id><created_at><body><sender>
//                                                                   a full row with a sender
//     n <seq> <chat_id>\n                                                                  a notice
// (A row without a sender stays an `r`, so a gateway that predates senders reads it.)
// Lengths make the format binary safe (a body may hold any byte but NUL, as Postgres text). A row
// whose id, created_at, body and sender together pass kBusRowBytes goes as a notice: the gateways read it
// from the inbox (so does an edit or delete, and a message that came already edited or deleted), so a large message costs one query per gateway instead of a copy through Redis to
// every gateway; a payload is closed once it passes kBusPayloadBytes and the next one begins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inbox/core/delivery.hpp"

namespace chat_outboxd {

constexpr size_t kBusRowBytes = 16 * 1024;
constexpr size_t kBusPayloadBytes = 64 * 1024;

// BusEntry is one decoded entry: a full row, or a notice (only seq and chat_id set) that the row
// is in the inbox.
struct BusEntry {
	InboxMessage message;
	bool notice = false;
};

struct BusPayload {
	int64_t published_ms = 0;
	std::vector<BusEntry> entries;
};

// EncodeBus splits messages (in seq order) into payloads, as above.
std::vector<std::string> EncodeBus(const std::vector<InboxMessage> &messages, int64_t published_ms);

// DecodeBus parses one payload; nullopt when it is not one (nothing of it is used then).
std::optional<BusPayload> DecodeBus(std::string_view payload);

} // namespace chat_outboxd
