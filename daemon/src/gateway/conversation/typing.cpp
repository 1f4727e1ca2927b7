// daemon/src/gateway/conversation/typing.cpp - see typing.hpp.
#include "gateway/conversation/typing.hpp"

namespace chat_outboxd {

void
Typing::Report(Client &c, int64_t chat, bool typing, const Conversation::Reply &reply)
{
	nlohmann::json data = {{"chat_id", chat}, {"user", conv::UserJson(ctx_.conv.User(c))}, {"typing", typing}};
	ctx_.conv.Publish(chat, conv::Event::Typing, data, [reply](bool ok) {
		reply(ok ? nlohmann::json{{"ok", true}} : conv::Error("unavailable", "Redis did not take the typing report; retry"));
	});
}

} // namespace chat_outboxd
