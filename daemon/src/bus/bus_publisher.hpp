// daemon/src/bus/bus_publisher.hpp - the consumer's side of the bus: every delivery the consumer
// hands to its gateway is also published on the service's bus channel, so every other gateway of the
// service shows it too (docs/architecture.md, "The bus").
//
// It sits between the consumer and its gateway as a MessageSink; the consumer calls it after the
// inbox commit, so nothing uncommitted is ever published. Rows of other writers that the inbox write
// brought back (InboxMessage::other_writer) go to the own gateway only: their writer publishes them. A PUBLISH that fails is counted and the
// run of failures logged once: the gateways notice the missing seqs and read them from the inbox.
#pragma once

#include <string>
#include <vector>

#include "bus/core/bus_metrics.hpp"
#include "inbox/core/delivery.hpp"
#include "net/redis_commands.hpp"

namespace chat_outboxd {

class BusPublisher : public MessageSink {
  public:
	BusPublisher(RedisCommands &cmd, std::string channel, MessageSink &next, BusMetrics &metrics)
	    : cmd_(cmd), channel_(std::move(channel)), next_(next), metrics_(metrics)
	{
	}

	void Deliver(const std::vector<InboxMessage> &messages) override;

  private:
	RedisCommands &cmd_;
	std::string channel_;
	MessageSink &next_;
	BusMetrics &metrics_;
	bool failing_ = false; // a failure was logged; cleared by the next success
};

} // namespace chat_outboxd
