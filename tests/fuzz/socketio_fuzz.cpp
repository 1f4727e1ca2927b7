// tests/fuzz/socketio_fuzz.cpp - the Socket.IO packet decoder and the auth fields read from CONNECT.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/client/core/message_json.hpp"
#include "gateway/engineio/core/socketio.hpp"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	chat_outboxd::sio::Packet p;
	std::string error;
	if (!chat_outboxd::sio::DecodeClientPacket(text, &p, &error))
		return 0;
	if (p.data.is_object()) {
		std::vector<int64_t> chats;
		if (p.data.contains("chats"))
			(void)chat_outboxd::ChatListFromJson(p.data["chats"], &chats);
		int64_t v = 0;
		if (p.data.contains("offset"))
			(void)chat_outboxd::JsonInteger(p.data["offset"], &v);
	}
	(void)chat_outboxd::DumpJson(p.data);
	return 0;
}
