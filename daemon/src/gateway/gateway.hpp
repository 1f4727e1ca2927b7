// daemon/src/gateway/gateway.hpp - the client gateway: Socket.IO (Engine.IO v4: polling + WebSocket),
// a plain JSON WebSocket endpoint (/ws), /healthz and /metrics, all on one libwebsockets
// context running on the daemon's libuv loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "bus/core/bus_metrics.hpp"
#include "inbox/core/delivery.hpp"
#include "net/pg_client.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class OutboxStatus;
class RedisCommands;
class RedisSubscriber;
} // namespace chat_outboxd

namespace chat_outboxd {

class Gateway : public MessageSink {
  public:
	// pg is the gateway's own connection, used for catch-up reads, history, read cursors and client
	// sends; redis (commands and PUBLISH) and pubsub (subscribed: the chats' events channels and the
	// service's bus) carry the conversation events and the bus between gateways (docs/gateway.md,
	// "Across gateways and services: Redis"; docs/architecture.md, "The bus"). Both are shard 0's and outlive the Gateway.
	// bus_metrics is shared with the consumer's BusPublisher: /metrics shows the bus as one group.
	Gateway(uv_loop_t *loop, const Config &cfg, PgClient &pg, Metrics &metrics, BusMetrics &bus_metrics,
	        RedisCommands &redis, RedisSubscriber &pubsub);
	~Gateway() override;

	// Start binds cfg.listen; false with *error when the address cannot be used.
	bool Start(std::string *error);
	// StartBus subscribes to the service's bus channel on the pub/sub connection (bus/bus_subscriber.hpp): from
	// then on every row, from the bus, from Deliver or read from the inbox, reaches the clients through
	// one order. redis_health: no consumer runs here, so /healthz's redis figure is the bus subscription.
	void StartBus(const std::string &channel, bool redis_health);
	// Deliver pushes committed, new inbox messages (in seq order) to rooms chat:<chat_id>.
	void Deliver(const std::vector<InboxMessage> &messages) override;
	// Shutdown closes every client cleanly (transport close, so clients reconnect elsewhere),
	// then the listener, and calls done when the lws context is gone.
	void Shutdown(std::function<void()> done);
	size_t ClientCount() const;
	// SetOutboxStatus: /metrics also shows the relay's figures it reads (--outbox-status-url).
	void SetOutboxStatus(const OutboxStatus *s);
	// PostgresUp: the gateway's connection is established. The tables' version is asked then, so that no
	// client's query waits for the answer (with 1.1 tables it is never asked again): a query sent before
	// the connection is up fails at once. A bus fill that failed while it was down is sent then too.
	void PostgresUp();

  private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
