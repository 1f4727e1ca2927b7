// daemon/src/bus/bus_subscriber.hpp - the gateway's side of the bus (docs/architecture.md, "The bus"): it
// subscribes to the service's bus channel and hands every inbox row, whether from the bus, from this
// daemon's own consumer or read from the inbox, to a BusSink (the gateway's Hub) through one BusOrder,
// so the Hub sees each seq once and in order, whichever instance consumed it.
//
// It reads the inbox (by seq, on the gateway's Postgres connection) when the order finds a gap that does
// not close within kGapGraceMs, after every (re)subscribe, when a bus message was unreadable, and
// every kQuietCheckMs in which no bus message came, when the inbox's max(seq) is past what it
// handed on (the last rows published before an outage, or a publish that failed, are found so).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <uv.h>

#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "common/backoff.hpp"
#include "base/uv_timer.hpp"
#include "bus/core/bus_metrics.hpp"
#include "bus/core/bus_order.hpp"
#include "inbox/core/delivery.hpp"
#include "inbox/inbox_schema.hpp"
#include "net/pg_client.hpp"
#include "common/redis_url.hpp"

namespace chat_outboxd {

class RedisSubscriber;

// BusSink is whom the subscriber hands rows to (the gateway's Hub: gateway/hub/hub.hpp). Deliver gets
// the rows in seq order, each once; SeenSeq the inbox's max(seq) when the order starts (everything up
// to it is history).
class BusSink : public MessageSink {
  public:
	virtual void SeenSeq(int64_t seq) = 0;
};

// kGapGraceMs: how long a gap may wait for its rows (the bus and a consumer race by milliseconds)
// before the inbox is read. kQuietCheckMs: how often a quiet bus makes the gateway compare the
// inbox's max(seq) with what it handed on. kBusBufferBytes: bodies buffered behind a gap, at most.
// kFillPage: rows per fill query. kFillRetryMs: a failed fill is tried again after this, then twice as
// late each time up to kFillRetryMaxMs while fills keep failing.
constexpr int64_t kGapGraceMs = 100;
constexpr int64_t kQuietCheckMs = 1000;
constexpr size_t kBusBufferBytes = 4 * 1024 * 1024;
constexpr int64_t kFillPage = 200;
constexpr int64_t kFillRetryMs = 1000;
constexpr int64_t kFillRetryMaxMs = 8000;
// kStartRetryMs: the first max(seq) read is tried again this soon (Postgres may not be connected yet),
// then twice as late each time up to kStartRetryMaxMs while Postgres stays away.
constexpr int64_t kStartRetryMs = 100;
constexpr int64_t kStartRetryMaxMs = 2000;

class BusSubscriber {
  public:
	// pg is the gateway's connection. The bus' reads do not count against --query-queue (which bounds
	// what clients make the gateway ask): there is at most one max(seq) read and one fill out at a time.
	// schema: the gateway's (QueryQueue::Schema), on the same connection as pg.
	BusSubscriber(uv_loop_t *loop, const Config &cfg, BusSink &sink, PgClient &pg, InboxSchema &schema, Metrics &metrics,
	              BusMetrics &bus_metrics);
	~BusSubscriber();
	BusSubscriber(const BusSubscriber &) = delete;
	BusSubscriber &operator=(const BusSubscriber &) = delete;

	// Start subscribes to channel through sub, the daemon's pub/sub connection on shard 0 (where every
	// consumer publishes), which the chats' events share; sub outlives this. redis_health: this daemon
	// has no consumer, so /healthz's redis figure is the bus subscription (up once confirmed).
	void Start(RedisSubscriber &sub, const std::string &channel, bool redis_health);
	// Own takes the rows this daemon's consumer committed (in seq order).
	void Own(std::vector<InboxMessage> rows);
	// PostgresUp: pg is (re)connected. A fill that failed meanwhile is sent now instead of after its
	// retry delay (kFillRetryMs and up), which after a Postgres failover held every client of the
	// gateway up to a second past the reconnect (docs/ha.md, "What happens at a failover").
	void PostgresUp();
	// Close ends the subscription (the connection stays its owner's) and the timers; done runs when
	// their handles are closed.
	void Close(std::function<void()> done);

  private:
	void OnMessage(const std::string &payload);
	void OnSubscribed();
	// UpdateSubscribed sets the subscribed gauge (and /healthz's redis with redis_health).
	void UpdateSubscribed();
	// CheckInbox reads the inbox's max(seq): the start of the order, or a Notice.
	void CheckInbox();
	void OnQuietTick();
	// Hand gives rows to the sink, then sends a fill that is due or arms the timer for one.
	void Hand(std::vector<InboxMessage> rows);
	void Pump();
	void RunFill(const BusOrder::Fill &fill);
	void FillAnswered(const BusOrder::Fill &fill, PgResult &&r);
	int64_t Now() const { return static_cast<int64_t>(uv_now(loop_)); }

	uv_loop_t *loop_;
	const Config &cfg_;
	BusSink &sink_;
	PgClient &pg_;
	InboxSchema &schema_;
	Metrics &metrics_;
	BusMetrics &bus_metrics_;
	BusOrder order_{kBusBufferBytes, kGapGraceMs};
	RedisSubscriber *sub_ = nullptr; // set by Start
	std::string channel_;
	bool redis_health_ = false;
	bool checking_ = false; // a max(seq) query is out
	bool heard_ = false;    // a bus message came since the last quiet tick
	bool closed_ = false;
	chat_outbox::Backoff start_retry_{kStartRetryMs, kStartRetryMaxMs};
	chat_outbox::Backoff fill_retry_{kFillRetryMs, kFillRetryMaxMs}; // failing: logged once, said again on success
	std::string sql_high_, sql_fill_[2];                             // sql_fill_[with_sender] (QueryQueue::Schema)
	UvTimer fill_timer_, quiet_timer_;
	std::shared_ptr<BusSubscriber *> alive_; // weak copies tell query callbacks whether we still exist
};

} // namespace chat_outboxd
