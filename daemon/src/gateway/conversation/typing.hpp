// daemon/src/gateway/conversation/typing.hpp - typing indicators: ephemeral, never stored; a report is published on
// the chat's channel and every gateway shows it to the chat's clients other than the typist's own.
#pragma once

#include "gateway/conversation/conversation.hpp"

namespace chat_outboxd {

class Typing {
  public:
	explicit Typing(ConvContext &ctx) : ctx_(ctx) {}
	void Report(Client &c, int64_t chat, bool typing, const Conversation::Reply &reply);

  private:
	ConvContext &ctx_;
};

} // namespace chat_outboxd
