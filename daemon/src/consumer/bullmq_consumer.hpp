// daemon/src/consumer/bullmq_consumer.hpp - the BullMQ-compatible consumer: fetch -> inbox -> deliver -> complete.
//
// One batch is written and pushed at a time, so messages reach clients in queue order; the next
// batch is fetched during that write, and a pushed batch is completed during the next one's write:
//   1. fetch up to --batch-size jobs in one script call (locked with our tokens);
//   2. poison jobs (and jobs carrying `defa`) go to the failed set with a reason;
//   3. the others are written to <service>.inbox in one statement;
//   4. only after that commit, the new rows are handed to the MessageSink in seq order;
//   5. the batch is completed in one script call (duplicates too).
// Locks are extended while a batch is held. Postgres down: the batch is kept (locks extended) and
// the write retried; nothing is completed. Redis down: reconnect, then finish what was held and
// take back, via the identity, anything a lost fetch reply may have locked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <uv.h>

#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "inbox/core/delivery.hpp"
#include "net/pg_client.hpp"
#include "net/redis_commands.hpp"

namespace chat_outboxd {

// ConsumerLease: the consumer works one partition under its lease (consumer/partition_manager.hpp).
// Its fetch and recovery scripts are fenced in Redis by the lease's value (holder); `valid` is asked
// before anything new starts (a fetch, a batch), and a fenced script that finds the lease gone calls
// on_lost. Its first recovery takes back every earlier holder's jobs. The manager reports the
// daemon's health figures (redis_up, postgres_up) and checks its identity.
struct ConsumerLease {
	std::string holder;
	std::function<bool()> valid;
	std::function<void()> on_lost;
};

class BullmqConsumer {
  public:
	// cmd runs scripts; blocking waits on the marker with BZPOPMIN; pg is the inbox connection;
	// cfg.queue is the partition's queue.
	BullmqConsumer(uv_loop_t *loop, const Config &cfg, RedisCommands &cmd, RedisCommands &blocking, PgClient &pg,
	               MessageSink &sink, Metrics &metrics, ConsumerLease lease);
	~BullmqConsumer();

	void Start();
	// Stop takes no new batch, finishes the one in flight (or gives up after a deadline while a
	// server is down), closes the consumer's timers and then calls done.
	void Stop(std::function<void()> done);

	struct Impl;

  private:
	std::unique_ptr<Impl> impl_;
};

} // namespace chat_outboxd
