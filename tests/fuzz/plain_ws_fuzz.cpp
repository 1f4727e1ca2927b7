// tests/fuzz/plain_ws_fuzz.cpp - the /ws JSON frame decoder and the ?chats= / Authorization parsers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/engineio/core/engineio.hpp"
#include "gateway/auth/core/gateway_auth.hpp"
#include "gateway/plain_ws/core/plain_ws_protocol.hpp"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	chat_outboxd::plainws::ClientFrame f;
	std::string error;
	if (chat_outboxd::eio::ValidUtf8(text) && chat_outboxd::plainws::DecodeClientFrame(text, &f, &error))
		(void)chat_outboxd::plainws::AckFrame(f.ref, {{"ok", true}});
	std::vector<int64_t> chats;
	(void)chat_outboxd::ParseChatList(text, &chats);
	(void)chat_outboxd::BearerToken(text);
	return 0;
}
