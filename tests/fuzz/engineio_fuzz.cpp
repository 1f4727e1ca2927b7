// tests/fuzz/engineio_fuzz.cpp - polling bodies and Engine.IO packets, then the Socket.IO decoder on
// every message packet: what a client controls on both transports.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/engineio/core/engineio.hpp"
#include "gateway/engineio/core/socketio.hpp"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view body(reinterpret_cast<const char *>(data), size);
	if (!chat_outboxd::eio::ValidUtf8(body))
		return 0;
	std::vector<std::string_view> records;
	if (!chat_outboxd::eio::SplitPayload(body, &records))
		records = {body};
	for (std::string_view r : records) {
		chat_outboxd::eio::Packet p;
		if (!chat_outboxd::eio::DecodePacket(r, &p) || p.type != chat_outboxd::eio::PacketType::Message)
			continue;
		chat_outboxd::sio::Packet sp;
		std::string error;
		if (chat_outboxd::sio::DecodeClientPacket(p.data, &sp, &error) && sp.ack_id)
			(void)chat_outboxd::sio::EncodeAck(sp.nsp, *sp.ack_id, nlohmann::json::array({sp.data}));
	}
	return 0;
}
