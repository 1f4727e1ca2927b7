// daemon/src/gateway/conversation/core/conversation_counters.cpp - see conversation_counters.hpp.
#include "gateway/conversation/core/conversation_counters.hpp"

#include "common/process/prometheus_text.hpp"

namespace chat_outboxd::conv {

using chat_outbox::MetricHeader;

namespace {

constexpr std::array<std::string_view, 4> kRequestNames = {"history", "read", "typing", "presence"};
// docs/client-protocol.md, "Conversations": the error codes of a refused request; "other" last.
constexpr std::array<std::string_view, 8> kResultNames = {"ok", "bad_request", "forbidden", "no_identity",
                                                          "rate_limited", "busy", "unavailable", "other"};
constexpr std::array<Event, 5> kEventList = {Event::Presence, Event::Typing, Event::Read, Event::Shown, Event::Sent};
// The events the gateway PUBLISHes itself; presence and read go out from inside the presence and read
// scripts (one call changes the state and announces it), which these counters do not see.
constexpr std::array<Event, 3> kPublishedList = {Event::Typing, Event::Shown, Event::Sent};

template <size_t N>
size_t
IndexOf(const std::array<std::string_view, N> &names, std::string_view name)
{
	for (size_t i = 0; i < N; i++)
		if (names[i] == name)
			return i;
	return N;
}

size_t
ResultIndex(const nlohmann::json &result)
{
	if (!result.is_object())
		return kResultNames.size() - 1;
	auto ok = result.find("ok");
	if (ok != result.end() && ok->is_boolean() && ok->get<bool>())
		return 0;
	auto error = result.find("error");
	if (error == result.end() || !error->is_object())
		return kResultNames.size() - 1;
	auto code = error->find("code");
	if (code == error->end() || !code->is_string())
		return kResultNames.size() - 1;
	size_t i = IndexOf(kResultNames, code->get_ref<const std::string &>());
	return i < kResultNames.size() ? i : kResultNames.size() - 1;
}

void
Header(std::string *out, const char *name, const char *help)
{
	MetricHeader(out, name, help, "counter");
}

} // namespace

void
Counters::CountRequest(std::string_view request, const nlohmann::json &result)
{
	size_t r = IndexOf(kRequestNames, request);
	if (r < kRequests)
		requests_[r][ResultIndex(result)]++;
}

void
Counters::CountPublished(Event e, bool taken)
{
	(taken ? published_ : publish_failed_)[static_cast<size_t>(e)]++;
}

void
Counters::CountReceived(Event e)
{
	received_[static_cast<size_t>(e)]++;
}

void
Counters::Render(std::string *out) const
{
	Header(out, "chat_outboxd_gateway_conversation_requests_total",
	       "Conversation requests answered, by request and result (ok or the error code).");
	for (size_t r = 0; r < kRequests; r++)
		for (size_t k = 0; k < kResults; k++)
			*out += "chat_outboxd_gateway_conversation_requests_total{request=\"" + std::string(kRequestNames[r]) +
			        "\",result=\"" + std::string(kResultNames[k]) + "\"} " + std::to_string(requests_[r][k]) + "\n";
	auto per_event = [out](const char *name, const char *help, const auto &events,
	                       const std::array<uint64_t, kEvents> &counts) {
		Header(out, name, help);
		for (Event e : events)
			*out += std::string(name) + "{event=\"" + EventName(e) + "\"} " +
			        std::to_string(counts[static_cast<size_t>(e)]) + "\n";
	};
	per_event("chat_outboxd_gateway_conversation_published_total",
	          "Typing, shown and sent events this gateway published on the chats' channels (Redis took them).",
	          kPublishedList, published_);
	per_event("chat_outboxd_gateway_conversation_publish_failed_total",
	          "Typing, shown and sent events whose PUBLISH failed or was not answered.", kPublishedList,
	          publish_failed_);
	per_event("chat_outboxd_gateway_conversation_received_total",
	          "Conversation events this gateway took off the chats' channels.", kEventList, received_);
	Header(out, "chat_outboxd_gateway_conversation_malformed_total",
	       "Messages on a chat's channel that were not a conversation event (ignored).");
	*out += "chat_outboxd_gateway_conversation_malformed_total " + std::to_string(malformed_) + "\n";
}

} // namespace chat_outboxd::conv
