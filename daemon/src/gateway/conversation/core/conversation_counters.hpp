// daemon/src/gateway/conversation/core/conversation_counters.hpp - what /metrics says of the conversation events
// (docs/client-protocol.md, "Conversations"): the requests clients made, by request and result, and the
// events this gateway put on the chats' channels and took off them.
//
// Labels come from fixed lists, never from what a client sent: a request that is not one of the four
// is not counted here, and a result code outside conv's codes counts as "other", so no client can
// grow the label set.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/conversation/core/conversation.hpp"

namespace chat_outboxd::conv {

class Counters {
  public:
	// CountRequest counts one answered request: result is what the client got ({ok:true,…} or Error).
	void CountRequest(std::string_view request, const nlohmann::json &result);
	// CountPublished counts one PUBLISH of the event (typing, shown or sent: the events the gateway
	// publishes itself); taken: Redis answered it.
	void CountPublished(Event e, bool taken);
	// CountReceived counts one event from a chat's channel; CountMalformed one that was not ours.
	void CountReceived(Event e);
	void CountMalformed() { malformed_++; }
	// Render appends the Prometheus lines (every label pair, zeros included, so rates start at once).
	void Render(std::string *out) const;

  private:
	static constexpr size_t kRequests = 4; // history, read, typing, presence
	static constexpr size_t kResults = 8;  // ok, the six error codes, other
	static constexpr size_t kEvents = 5;   // conv::Event
	std::array<std::array<uint64_t, kResults>, kRequests> requests_{};
	std::array<uint64_t, kEvents> published_{}, publish_failed_{}, received_{};
	uint64_t malformed_ = 0;
};

} // namespace chat_outboxd::conv
