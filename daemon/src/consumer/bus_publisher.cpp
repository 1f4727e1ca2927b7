// daemon/src/consumer/bus_publisher.cpp - see bus_publisher.hpp.
#include "consumer/bus_publisher.hpp"

#include "base/log.hpp"
#include "base/wall_clock.hpp"
#include "gateway/core/bus_codec.hpp"

namespace chat_outboxd {

void
BusPublisher::Deliver(const std::vector<InboxMessage> &messages)
{
	for (std::string &payload : EncodeBus(messages, WallMs())) {
		cmd_.Command({"PUBLISH", channel_, std::move(payload)}, [this](const RedisValue *r, const std::string &err) {
			if (r && !r->IsError()) {
				metrics_.bus_published++;
				if (failing_)
					Log(Level::Notice, "bus: publishing again on %s", channel_.c_str());
				failing_ = false;
				return;
			}
			metrics_.bus_publish_failed++;
			if (!failing_)
				Log(Level::Warning, "bus: PUBLISH on %s failed: %s (other gateways read those rows from the inbox)",
				    channel_.c_str(), r ? r->str.c_str() : err.c_str());
			failing_ = true;
		});
	}
	next_.Deliver(messages);
}

} // namespace chat_outboxd
