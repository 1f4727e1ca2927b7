// daemon/src/bus/bus_publisher.cpp - see bus_publisher.hpp.
#include "bus/bus_publisher.hpp"

#include <algorithm>
#include <iterator>

#include "base/log.hpp"
#include "base/wall_clock.hpp"
#include "bus/core/bus_codec.hpp"

namespace chat_outboxd {

void
BusPublisher::Deliver(const std::vector<InboxMessage> &messages)
{
	bool all_own = std::none_of(messages.begin(), messages.end(), [](const InboxMessage &m) { return m.other_writer; });
	std::vector<InboxMessage> own; // copied only when other writers' rows must be left out
	if (!all_own)
		std::copy_if(messages.begin(), messages.end(), std::back_inserter(own),
		             [](const InboxMessage &m) { return !m.other_writer; });
	for (std::string &payload : EncodeBus(all_own ? messages : own, WallMs())) {
		cmd_.Command({"PUBLISH", channel_, std::move(payload)}, [this](const RedisValue *r, const std::string &err) {
			if (r && !r->IsError()) {
				metrics_.published++;
				if (failing_)
					Log(Level::Notice, "bus: publishing again on %s", channel_.c_str());
				failing_ = false;
				return;
			}
			metrics_.publish_failed++;
			if (!failing_)
				Log(Level::Warning, "bus: PUBLISH on %s failed: %s (other gateways read those rows from the inbox)",
				    channel_.c_str(), r ? r->str.c_str() : err.c_str());
			failing_ = true;
		});
	}
	next_.Deliver(messages);
}

} // namespace chat_outboxd
