// relay/src/outbox_db.hpp - chat-outbox-relay's Postgres side: one libpq connection.
//
// The pass is the extension's (extension/src/pg/relay_pass.cpp), with the same statements
// (common/relay/relay_sql.hpp): in one transaction per service, read a batch of the windows (the
// cursors move with it), add it to Redis in one Lua call, up to kMaxBatches batches; COMMIT only
// once Redis acknowledged every batch, ROLLBACK on any failure, so the cursors are where they were.
// Nothing is held across transactions.
#pragma once

#include <libpq-fe.h>

#include <map>
#include <optional>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/relay/mark_watch.hpp"
#include "common/relay/redis_link.hpp"

namespace chat_outbox::relay {

// PgFailure: a statement failed. lost = the connection is gone (every service waits, reconnect);
// otherwise it is about the statement's service (a dropped table) and the others go on.
// sqlstate: the error's SQLSTATE ("" when the connection failed).
struct PgFailure : std::runtime_error {
	bool lost;
	std::string sqlstate;
	PgFailure(bool l, const std::string &what, std::string state = "")
	    : std::runtime_error(what), lost(l), sqlstate(std::move(state)) {}
	// Another relay marked rows this pass read as unsent since its snapshot: nothing is wrong, the
	// pass is rolled back and goes again at once with a new snapshot.
	bool Conflict() const { return sqlstate == "40001"; }
};

struct Service {
	std::string name;
	std::string queue;
};

struct PassResult {
	int64_t relayed = 0;               // rows now in Redis
	int64_t claimed = 0;               // rows claimed, refused ones included (a full pass: go again)
	std::vector<std::string> refusals; // one log line per refused row
	int layout = 0;                    // the partition count the pass relayed under, or waits under (0: it claimed nothing)
	std::string layout_wait;           // set when a change of the count waits for the old queues: nothing relayed
	std::string layout_switched;       // a log line when this pass changed the count
};

// KnownLayout: the layout key's raw value that a service's last pass chose its count by, which its
// calls on shard 0 expect the key to hold (common/relay/bullmq_batch_add.hpp); kUnchecked before the
// first pass and after a failed one, so the next pass reads the key.
struct KnownLayout {
	LayoutExpect expect = LayoutExpect::kUnchecked;
	std::string value;
};

// The relay's Redis shards (--redis-url, common/partitions.hpp), shard 0 first.
using RedisShards = std::vector<std::unique_ptr<RedisLink>>;

// The extension's pass size: a backlog drains in transactions of up to this many batches.
constexpr int kMaxBatches = 8;
// The notification channel of sql/managed (its wake_relay and services_changed triggers).
constexpr const char kChannel[] = "chat_outbox_relay";

class OutboxDb {
  public:
	explicit OutboxDb(std::string conninfo) : conninfo_(std::move(conninfo)) {}
	~OutboxDb() { Disconnect(); }
	OutboxDb(const OutboxDb &) = delete;
	OutboxDb &operator=(const OutboxDb &) = delete;

	// Connect opens the session: LISTEN on kChannel, the relay's planner settings. Throws PgFailure.
	void Connect();
	void Disconnect();
	bool Connected() const { return conn_ != nullptr; }

	std::vector<Service> Services();
	// RunPass relays one service: each claimed batch split per partition, one Lua call per
	// partition on its shard; throws RedisFailure or PgFailure after rolling back. A failure on
	// any shard rolls the whole pass back. While a change of the service's partition count waits
	// for the old layout's queues, it rolls back and returns layout_wait.
	// down[s]: shard s is down; the claim leaves out the rows of the partitions it holds under
	// *last_layout (the count the service's last pass chose, 0 = unknown), so the other shards'
	// partitions go on; a pass that would still need a down shard throws kConnection. The pass
	// sets *last_layout as soon as it chose a count, so a pass that failed on a down shard has
	// told the next one which partitions to leave out.
	// *known: the layout key's value the count was chosen by. With one shard, a pass whose service
	// still wants *last_layout reads no key: its calls carry *known and the script checks the key
	// (docs/architecture.md, 'Where the relay reads the layout key'); a key found changed throws
	// kLayoutChanged. Any failure resets *known.
	// The pass is one READ COMMITTED transaction (a window's tick takes a snapshot of its own); a
	// second relay waits for the first on the service's row of chat_outbox.services, then starts where it ended.
	// *marks: when the service's marks were read (common/relay/mark_watch.hpp): they are read, and the
	// cursors whose rows Redis lost moved back, before the first batch when its rule says; each call
	// checks and writes its partition's mark; a mark found changed throws kMarkChanged. Any failure
	// makes the next pass read them.
	PassResult RunPass(const Service &svc, int64_t batch_size, RedisShards &shards, const std::string &prefix,
	                   const std::vector<bool> &down, int *last_layout, KnownLayout *known, MarkWatch *marks);
	// RecordLayout writes the count a service is relayed under and what a change waits for ("" none).
	void RecordLayout(const std::string &service, int layout, const std::string &change);
	// RecordServiceError sets (or clears, with "") the service's service_error in the status view.
	void RecordServiceError(const std::string &service, const std::string &error);
	// Heartbeat writes this relay's row of chat_outbox.relays.
	void Heartbeat(const std::string &relay_id, const std::string &state, const std::string &last_error,
	               const std::string &redis_warning, const std::string &appendfsync, const std::vector<std::string> &shards);
	// Purge runs one step of each outbox's rotation (chat_outbox.settings' retention) and deletes
	// received inbox rows past inbox_retention, 1,000 rows per statement, until a statement finds
	// fewer; returns the inbox rows deleted. Also forgets relays silent for a day (their rows of
	// chat_outbox.relays).
	int64_t Purge(const std::vector<Service> &services);
	// PurgeEveryMs: when the next purge round is due, from the retentions the last one read
	// (common/relay/purge_interval.hpp, the in-database relay's pace too).
	int64_t PurgeEveryMs() const { return purge_every_ms_; }
	// TakeRotationLog: the log lines of what the rotations started or stopped waiting for, once each.
	std::vector<std::string> TakeRotationLog() { return std::move(rotation_log_); }
	// TakeMarksLog: a line per partition whose rows Redis lost, found before a pass's first batch: they
	// go again (in that pass, or the next if it failed), so the line stands whatever the pass became.
	std::vector<std::string> TakeMarksLog() { return std::move(marks_log_); }
	// WaitForWake returns once a notification arrived (true) or after timeout_ms (false); a signal,
	// or something to read on also_fd (another wake-up's socket, -1 for none), ends it early too.
	// Notifications already received count at once.
	bool WaitForWake(int64_t timeout_ms, int also_fd = -1);

  private:
	PGresult *Exec(const std::string &sql, const std::vector<std::string> &params, ExecStatusType want);
	bool DrainNotifications();
	std::string Statement(const char *format, const std::string &service);
	// OutboxBefore12: whether the service's outbox is still 1.1's (relay_sql::kOutboxBefore12),
	// looked up once and again after a pass of the service failed.
	bool OutboxBefore12(const std::string &service);
	// HasMarks: whether the installed SQL has the marks' functions (relay_sql::kHasMarks), looked up
	// once and again after a pass of the service failed.
	bool HasMarks(const std::string &service);
	// CheckMarks: the step before a pass's first batch (MarkWatch's rule): reads the marks of the
	// partitions whose shard is up, and moves back the cursors whose rows Redis lost.
	void CheckMarks(const Service &svc, RedisShards &shards, const std::string &prefix, const std::vector<bool> &down,
	                int last_layout, MarkWatch *marks);
	// StepCalls: each call's mark step (relay_sql::kMarks) for the partitions of a batch read.
	std::map<int, std::pair<std::optional<std::string>, std::string>> StepCalls(const std::string &service, int partitions,
	                                                                            const std::vector<int> &parts);

	std::string conninfo_;
	PGconn *conn_ = nullptr;
	std::map<std::string, std::string> rotation_wait_; // per service: what its rotation waited for last ("" nothing)
	std::vector<std::string> rotation_log_;
	std::vector<std::string> marks_log_;
	std::map<std::string, bool> before_1_2_;
	std::map<std::string, bool> has_marks_;
	int64_t purge_every_ms_ = 1000; // the first rounds, until the settings are read
};

} // namespace chat_outbox::relay
