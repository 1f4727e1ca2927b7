// relay/src/outbox_db.cpp - see outbox_db.hpp.
#include "outbox_db.hpp"

#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <memory>

#include "common/relay/job_id.hpp"
#include "common/relay/partition_layout.hpp"
#include "common/relay/purge_interval.hpp"
#include "common/relay/relay_sql.hpp"
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"
#include "common/process/pg_primary.hpp"

namespace chat_outbox::relay {

namespace {

struct ResultFree {
	void operator()(PGresult *r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultFree>;

struct Row {
	int64_t id;
	std::string event, payload, payload_id;
	bool has_payload_id;
	int partition; // under the layout the pass relays
};

// Connects: every shard's link's connections (RedisLink::Connects), compared for equality only
int64_t
Connects(const RedisShards &shards)
{
	int64_t n = 0;
	for (const auto &s : shards)
		n += s->Connects();
	return n;
}

// ArrayLiteral: a Postgres array literal of the values, each quoted (nullopt: NULL)
std::string
ArrayLiteral(const std::vector<std::optional<std::string>> &values)
{
	std::string out = "{";
	for (size_t i = 0; i < values.size(); i++) {
		if (i > 0)
			out += ',';
		if (!values[i]) {
			out += "NULL";
			continue;
		}
		out += '"';
		for (char c : *values[i]) {
			if (c == '"' || c == '\\')
				out += '\\';
			out += c;
		}
		out += '"';
	}
	return out + "}";
}

} // namespace

void
OutboxDb::Disconnect()
{
	if (conn_)
		PQfinish(conn_);
	conn_ = nullptr;
}

void
OutboxDb::Connect()
{
	Disconnect();
	// a primary unless the URL says otherwise (common/process/pg_primary.hpp): a standby is skipped, not used;
	// named in pg_stat_activity unless the URL names it
	const char *keys[] = {kTargetSessionAttrsKey, "dbname", "fallback_application_name", nullptr};
	const char *values[] = {kTargetSessionAttrsPrimary, conninfo_.c_str(), "chat-outbox-relay", nullptr};
	conn_ = PQconnectdbParams(keys, values, 1);
	if (PQstatus(conn_) != CONNECTION_OK) {
		std::string why = PQerrorMessage(conn_);
		Disconnect();
		while (!why.empty() && why.back() == '\n')
			why.pop_back();
		throw PgFailure(true, "connect: " + why);
	}
	std::string setup = std::string("LISTEN ") + kChannel + ";";
	for (const auto &s : relay_sql::kPlannerSettings)
		setup += std::string("SET ") + s[0] + " = " + s[1] + ";";
	Result r(PQexec(conn_, setup.c_str()));
	if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
		std::string why = PQresultErrorMessage(r.get());
		Disconnect();
		throw PgFailure(true, "session setup: " + why);
	}
}

PGresult *
OutboxDb::Exec(const std::string &sql, const std::vector<std::string> &params, ExecStatusType want)
{
	std::vector<const char *> values;
	for (const auto &p : params)
		values.push_back(p.c_str());
	PGresult *r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
	                           nullptr, 0);
	if (PQresultStatus(r) == want)
		return r;
	// the primary message alone: one line, without the statement's text and a caret under it
	const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
	std::string why = primary ? primary : PQerrorMessage(conn_);
	std::string sqlstate = state ? state : "";
	PQclear(r);
	while (!why.empty() && why.back() == '\n')
		why.pop_back();
	bool lost = PQstatus(conn_) != CONNECTION_OK;
	if (lost)
		Disconnect();
	throw PgFailure(lost, why, sqlstate);
}

std::string
OutboxDb::Statement(const char *format, const std::string &service)
{
	char *quoted = PQescapeIdentifier(conn_, service.data(), service.size());
	if (!quoted)
		throw PgFailure(false, PQerrorMessage(conn_));
	std::string schema = quoted;
	PQfreemem(quoted);
	std::string sql = format;
	for (size_t at = sql.find("%s"); at != std::string::npos; at = sql.find("%s", at + schema.size()))
		sql.replace(at, 2, schema);
	return sql;
}

std::vector<Service>
OutboxDb::Services()
{
	Result r(Exec("SELECT name, queue FROM chat_outbox.services ORDER BY name", {}, PGRES_TUPLES_OK));
	std::vector<Service> out;
	for (int i = 0; i < PQntuples(r.get()); i++)
		out.push_back({PQgetvalue(r.get(), i, 0), PQgetvalue(r.get(), i, 1)});
	return out;
}

namespace {

// OnShard runs a call on shard s; a connection failure is marked as that shard's.
template <typename F>
auto
OnShard(int s, int nshards, F &&call)
{
	try {
		return call();
	} catch (RedisFailure &f) {
		if (f.kind != RedisFailure::kConnection || nshards == 1)
			throw;
		throw RedisFailure(RedisFailure::kConnection, "shard " + std::to_string(s) + ": " + f.what(), s);
	}
}

// ChooseLayout: the partition count a pass relays under, decided after its first claim (as the
// extension's relay_pass.cpp does, docs/architecture.md 'Changing the number of partitions'): the
// layout key's count on shard 0, or the service's new count once the old layout's queues hold no
// job (SET before any job goes under it). nullopt while they still do (*wait says what it waits for).
// *known is set to the key's value the count was chosen by (unchecked while a change waits).
std::optional<int>
ChooseLayout(const std::string &service, const std::string &queue, int wanted, RedisShards &shards, const std::string &prefix, std::string *wait,
             std::string *switched, int *current_out, const std::vector<bool> &down, KnownLayout *known)
{
	*known = KnownLayout{};
	auto value = shards[0]->Get(LayoutKey(prefix, queue));
	auto current = ParseLayout(value);
	if (!current)
		throw RedisFailure(RedisFailure::kService, LayoutValueProblem(queue, value.value_or("")));
	*current_out = *current;
	int64_t jobs = 0;
	if (*current != wanted)
		for (size_t s = 0; s < shards.size(); s++) {
			auto keys = QueueJobsKeys(prefix, queue, *current, static_cast<int>(s), static_cast<int>(shards.size()));
			if (keys.empty())
				continue;
			if (down[s])
				throw RedisFailure(RedisFailure::kConnection, "shard " + std::to_string(s) + " is down", static_cast<int>(s));
			jobs += OnShard(static_cast<int>(s), static_cast<int>(shards.size()),
			                [&] { return shards[s]->EvalInteger(QueueJobsScript(), keys); });
		}
	switch (NextLayoutStep(*current, wanted, jobs)) {
	case LayoutStep::kRelay:
		*known = value ? KnownLayout{LayoutExpect::kHolds, *value} : KnownLayout{LayoutExpect::kAbsent, ""};
		return *current;
	case LayoutStep::kWait:
		*wait = LayoutWaitMessage(*current, wanted, jobs);
		return std::nullopt;
	case LayoutStep::kSwitch:
		shards[0]->Set(LayoutKey(prefix, queue), std::to_string(wanted));
		*known = KnownLayout{LayoutExpect::kHolds, std::to_string(wanted)};
		*switched = "service " + service + " is relayed to " + std::to_string(wanted) + " partition(s) now, " +
		            std::to_string(*current) + " before (the queues of the old layout were empty)";
		return wanted;
	}
	return std::nullopt;
}

} // namespace

bool
OutboxDb::OutboxBefore12(const std::string &service)
{
	auto known = before_1_2_.find(service);
	if (known != before_1_2_.end())
		return known->second;
	Result r(Exec(relay_sql::kOutboxBefore12, {service}, PGRES_TUPLES_OK));
	bool before = PQntuples(r.get()) == 1 && std::string(PQgetvalue(r.get(), 0, 0)) == "t";
	before_1_2_[service] = before;
	return before;
}

bool
OutboxDb::HasMarks(const std::string &service)
{
	auto known = has_marks_.find(service);
	if (known != has_marks_.end())
		return known->second;
	Result r(Exec(relay_sql::kHasMarks, {}, PGRES_TUPLES_OK));
	bool has = PQntuples(r.get()) == 1 && std::string(PQgetvalue(r.get(), 0, 0)) == "t";
	has_marks_[service] = has;
	return has;
}

void
OutboxDb::CheckMarks(const Service &svc, RedisShards &shards, const std::string &prefix, const std::vector<bool> &down,
                     int last_layout, MarkWatch *marks)
{
	if (!marks->MustRead(last_layout, Connects(shards)))
		return;
	Result cursors(Exec(relay_sql::kCursorCount, {svc.name}, PGRES_TUPLES_OK));
	if (PQntuples(cursors.get()) != 1 || PQgetisnull(cursors.get(), 0, 0))
		return; // no cursor yet: nothing was sent, and the first batch makes them
	const int count = std::atoi(PQgetvalue(cursors.get(), 0, 0));
	const int nshards = static_cast<int>(shards.size());
	std::vector<std::optional<std::string>> held;
	std::vector<std::optional<std::string>> parts;
	for (int p = 0; p < count; p++) {
		const int s = ShardOf(p, nshards);
		if (down[s])
			continue;
		held.push_back(OnShard(s, nshards, [&] { return shards[s]->Get(MarkKey(prefix, PartitionQueue(svc.queue, count, p))); }));
		parts.push_back(std::to_string(p));
	}
	Result moved(Exec(relay_sql::kRewind, {svc.name, ArrayLiteral(parts), ArrayLiteral(held)}, PGRES_TUPLES_OK));
	for (int i = 0; i < PQntuples(moved.get()); i++)
		marks_log_.push_back(std::string("redis lacks ") + PQgetvalue(moved.get(), i, 1) + " job(s) of service " + svc.name +
		                     ", partition " + PQgetvalue(moved.get(), i, 0) +
		                     ", that it had acknowledged (its data went back since: a failover to a replica that "
		                     "had not received them, or a restart from an older copy); sending them again");
	marks->Read(count, Connects(shards));
}

std::map<int, std::pair<std::optional<std::string>, std::string>>
OutboxDb::StepCalls(const std::string &service, int partitions, const std::vector<int> &parts)
{
	std::vector<std::optional<std::string>> listed;
	for (int p : parts)
		listed.push_back(std::to_string(p));
	Result m(Exec(relay_sql::kMarks, {service, std::to_string(partitions), ArrayLiteral(listed)}, PGRES_TUPLES_OK));
	std::map<int, std::pair<std::optional<std::string>, std::string>> steps;
	for (int i = 0; i < PQntuples(m.get()); i++)
		steps[std::atoi(PQgetvalue(m.get(), i, 0))] = {
		    PQgetisnull(m.get(), i, 1) ? std::nullopt : std::optional<std::string>(PQgetvalue(m.get(), i, 1)),
		    PQgetvalue(m.get(), i, 2)};
	return steps;
}

PassResult
OutboxDb::RunPass(const Service &svc, int64_t batch_size, RedisShards &shards, const std::string &prefix,
                  const std::vector<bool> &down, int *last_layout, KnownLayout *known, MarkWatch *marks)
{
	PassResult result;
	const int nshards = static_cast<int>(shards.size());
	std::string excluded = "{";
	const int basis = std::max(*last_layout, 1);
	for (int p = 0; p < basis; p++)
		if (down[ShardOf(p, nshards)])
			excluded += (excluded.size() > 1 ? "," : "") + std::to_string(p);
	excluded += "}";
	const bool before_1_2 = OutboxBefore12(svc.name);
	// 1.1's outbox: one REPEATABLE READ transaction, so every claim of the pass reads with its first
	// snapshot (a late commit waits for the next pass); 1.2's windows take their own snapshots
	Result(Exec(before_1_2 ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN ISOLATION LEVEL READ COMMITTED", {}, PGRES_COMMAND_OK));
	try {
		const std::string refuse = Statement(before_1_2 ? relay_sql::before_1_2::kRefuse : relay_sql::kRefuse, svc.name);
		const std::string claim_1_1 = Statement(relay_sql::before_1_2::kClaim, svc.name);
		std::string after = std::to_string(LLONG_MIN);
		int64_t last_id = 0;
		std::vector<std::pair<int64_t, std::string>> refused;
		std::vector<bool> written(nshards, false); // the shards this pass sent a batch to
		const bool has_marks = !before_1_2 && HasMarks(svc.name);
		if (has_marks)
			CheckMarks(svc, shards, prefix, down, *last_layout, marks);
		for (int b = 0; b < kMaxBatches; b++) {
			Result r(before_1_2 ? Exec(claim_1_1, {std::to_string(batch_size), after, std::to_string(basis), excluded}, PGRES_TUPLES_OK)
			                    : Exec(relay_sql::kClaim, {svc.name, std::to_string(batch_size), std::to_string(*last_layout), excluded},
			                           PGRES_TUPLES_OK));
			int n = PQntuples(r.get());
			if (n == 0)
				break;
			if (result.layout == 0) {
				Result w(Exec(relay_sql::kWantedPartitions, {svc.name}, PGRES_TUPLES_OK));
				int wanted = PQntuples(w.get()) == 1 ? std::atoi(PQgetvalue(w.get(), 0, 0)) : 1;
				// one shard and the count of the last pass: the calls' check of the key is its read (not on a
				// cluster, where a partition's call cannot check it: another slot)
				bool known_still = nshards == 1 && !InClusterForm(svc.queue) && known->expect != LayoutExpect::kUnchecked &&
				                   *last_layout == wanted;
				auto layout = known_still ? std::optional<int>(wanted)
				                          : ChooseLayout(svc.name, svc.queue, wanted, shards, prefix, &result.layout_wait,
				                                         &result.layout_switched, &result.layout, down, known);
				if (!layout) {
					*last_layout = result.layout;
					Result(Exec("ROLLBACK", {}, PGRES_COMMAND_OK));
					return result;
				}
				result.layout = *layout;
				*last_layout = *layout;
			}
			std::vector<Row> rows(n);
			for (int i = 0; i < n; i++) {
				rows[i].id = std::stoll(PQgetvalue(r.get(), i, 0));
				rows[i].event = PQgetvalue(r.get(), i, 1);
				rows[i].payload = PQgetvalue(r.get(), i, 2);
				rows[i].has_payload_id = !PQgetisnull(r.get(), i, 3);
				rows[i].payload_id = PQgetvalue(r.get(), i, 3);
				rows[i].partition = RowPartition(PQgetisnull(r.get(), i, 4) ? std::nullopt : ChatIdOfJson(PQgetvalue(r.get(), i, 4)),
				                                 result.layout);
			}
			std::sort(rows.begin(), rows.end(), [](const Row &x, const Row &y) { return x.id < y.id; });
			last_id = rows[n - 1].id;
			std::vector<int> parts(n);
			for (int i = 0; i < n; i++)
				parts[i] = rows[i].partition;
			std::vector<Row> sorted;
			for (size_t i : SortOrder(parts))
				sorted.push_back(std::move(rows[i]));
			std::vector<std::string> ids(n);
			std::vector<JobSpec> jobs(n);
			for (int i = 0; i < n; i++) {
				ids[i] = ChooseJobId(sorted[i].has_payload_id ? sorted[i].payload_id.c_str() : nullptr, svc.name, sorted[i].id);
				jobs[i] = {ids[i], sorted[i].event, sorted[i].payload};
				parts[i] = sorted[i].partition;
			}
			// one Lua call per partition of the batch, on the partition's shard, each with its mark's step
			const auto calls = PlanCalls(parts, nshards);
			std::map<int, std::pair<std::optional<std::string>, std::string>> steps;
			if (has_marks) {
				std::vector<int> called;
				for (const auto &call : calls)
					called.push_back(call.partition);
				steps = StepCalls(svc.name, result.layout, called);
			}
			for (const auto &call : calls) {
				if (down[call.shard]) // left out under another count than this pass relays under
					throw RedisFailure(RedisFailure::kConnection, "shard " + std::to_string(call.shard) + " is down", call.shard);
				// shard 0 holds the layout key: its calls check it still holds what the count was chosen by
				LayoutCheck check{svc.queue};
				if (call.shard == 0)
					check = {svc.queue, known->expect, known->value};
				auto found = steps.find(call.partition);
				// none: the SQL has no marks, or the cursors are under another count; anything expected
				// while no call of the cursor marked yet (a mark there is another cursor's)
				MarkStep step;
				if (found != steps.end())
					step = MarkStep{found->second.first ? std::string_view(*found->second.first) : kAnyMark,
					                found->second.second};
				auto verdicts = OnShard(call.shard, nshards, [&] {
					return shards[call.shard]->AddBatch(PartitionQueue(svc.queue, result.layout, call.partition), check,
					                                    step, jobs.data() + call.first, call.n);
				});
				written[call.shard] = true;
				for (size_t i = 0; i < call.n; i++)
					if (verdicts[i])
						refused.emplace_back(sorted[call.first + i].id, *verdicts[i]);
			}
			after = std::to_string(last_id);
			result.claimed += n;
			if (n < batch_size)
				break;
		}
		// the marks commit only once the pass's jobs are on enough replicas to survive a failover:
		// every shard the pass wrote to must have its own writes acknowledged
		for (int s = 0; s < nshards; s++)
			if (written[s])
				OnShard(s, nshards, [&] { shards[s]->ConfirmReplicated(); });
		// a row Redis refused alone stays unsent with its reason; the rows after it are relayed
		for (const auto &[id, reason] : refused) {
			Result(Exec(refuse, {std::to_string(id), reason}, PGRES_COMMAND_OK));
			result.refusals.push_back("refused outbox row " + std::to_string(id) + " of " + svc.name + ": " + reason +
			                          " (it stays unsent; free the key, then UPDATE " + svc.name +
			                          ".outbox SET refused = NULL WHERE id = " + std::to_string(id) + ")");
		}
		result.relayed = result.claimed - static_cast<int64_t>(refused.size());
		if (result.relayed > 0)
			Result(Exec("INSERT INTO chat_outbox.relay_progress AS p (service, last_relayed_id, last_relayed_at, relayed_total) "
			            "VALUES ($1, $2, now(), $3) ON CONFLICT (service) DO UPDATE SET last_relayed_id = EXCLUDED.last_relayed_id, "
			            "last_relayed_at = EXCLUDED.last_relayed_at, relayed_total = p.relayed_total + EXCLUDED.relayed_total, "
			            "service_error = NULL",
			            {svc.name, std::to_string(last_id), std::to_string(result.relayed)}, PGRES_COMMAND_OK));
		Result(Exec("COMMIT", {}, PGRES_COMMAND_OK));
	} catch (...) {
		*known = KnownLayout{}; // whatever failed, the next pass reads the key
		marks->Forget();        // and its marks (a call whose answer was lost may have written)
		has_marks_.erase(svc.name);
		if (conn_)
			PQclear(PQexec(conn_, "ROLLBACK"));
		before_1_2_.erase(svc.name); // an update to 1.2 fails the 1.1 claim: look again next pass
		throw;
	}
	return result;
}

void
OutboxDb::RecordServiceError(const std::string &service, const std::string &error)
{
	Result(Exec("INSERT INTO chat_outbox.relay_progress AS p (service, service_error) VALUES ($1, NULLIF($2, '')) "
	            "ON CONFLICT (service) DO UPDATE SET service_error = EXCLUDED.service_error",
	            {service, error}, PGRES_COMMAND_OK));
}

void
OutboxDb::RecordLayout(const std::string &service, int layout, const std::string &change)
{
	Result(Exec("INSERT INTO chat_outbox.relay_progress AS p (service, layout, layout_change) VALUES ($1, $2, NULLIF($3, '')) "
	            "ON CONFLICT (service) DO UPDATE SET layout = EXCLUDED.layout, layout_change = EXCLUDED.layout_change",
	            {service, std::to_string(layout), change}, PGRES_COMMAND_OK));
}

void
OutboxDb::Heartbeat(const std::string &relay_id, const std::string &state, const std::string &last_error,
                    const std::string &redis_warning, const std::string &appendfsync, const std::vector<std::string> &shards)
{
	// the shard list as a text[] literal: each URL quoted, its quotes and backslashes escaped
	std::string list = "{";
	for (const auto &url : shards) {
		list += list.size() > 1 ? ",\"" : "\"";
		for (char c : url) {
			if (c == '"' || c == '\\')
				list += '\\';
			list += c;
		}
		list += '"';
	}
	list += "}";
	Result(Exec("INSERT INTO chat_outbox.relays AS r (relay, pid, state, heartbeat_at, last_error, last_error_at, redis_warning, "
	            "redis_appendfsync, redis_shards) VALUES ($1, $2, $3, now(), NULLIF($4, ''), CASE WHEN $4 <> '' THEN now() END, "
	            "NULLIF($5, ''), NULLIF($6, ''), $7::text[]) ON CONFLICT (relay) DO UPDATE SET pid = EXCLUDED.pid, state = EXCLUDED.state, "
	            "heartbeat_at = now(), last_error = coalesce(EXCLUDED.last_error, r.last_error), "
	            "last_error_at = CASE WHEN EXCLUDED.last_error IS DISTINCT FROM r.last_error AND EXCLUDED.last_error IS NOT NULL "
	            "THEN now() ELSE r.last_error_at END, redis_warning = EXCLUDED.redis_warning, "
	            "redis_appendfsync = coalesce(EXCLUDED.redis_appendfsync, r.redis_appendfsync), redis_shards = EXCLUDED.redis_shards",
	            {relay_id, std::to_string(getpid()), state, last_error, redis_warning, appendfsync, list}, PGRES_COMMAND_OK));
}

int64_t
OutboxDb::Purge(const std::vector<Service> &services)
{
	// rows of relays gone for a day (a default relay id names a pid, so each restart adds one)
	Result(Exec("DELETE FROM chat_outbox.relays WHERE heartbeat_at < now() - interval '1 day'", {}, PGRES_COMMAND_OK));
	Result s(Exec("SELECT extract(epoch FROM retention)::int, extract(epoch FROM inbox_retention)::int "
	              "FROM chat_outbox.settings",
	              {}, PGRES_TUPLES_OK));
	if (PQntuples(s.get()) == 0)
		return 0;
	const std::string retention = PQgetvalue(s.get(), 0, 0), inbox_retention = PQgetvalue(s.get(), 0, 1);
	purge_every_ms_ = PurgeIntervalMs(std::atoll(retention.c_str()), std::atoll(inbox_retention.c_str()));
	constexpr int kLimit = 1000;
	int64_t total = 0;
	for (const auto &svc : services) {
		// the outbox: one step of its rotation (never a row deleted one by one); 1.1's outbox is purged
		try {
			if (OutboxBefore12(svc.name)) {
				if (retention != "0")
					Result(Exec(Statement(relay_sql::before_1_2::kPurgeSent, svc.name), {retention, std::to_string(kLimit)},
					            PGRES_COMMAND_OK));
			} else {
				Result r(Exec(relay_sql::kRotate, {svc.name, retention}, PGRES_TUPLES_OK));
				std::string waiting = PQgetisnull(r.get(), 0, 0) ? "" : PQgetvalue(r.get(), 0, 0);
				std::string &before = rotation_wait_[svc.name];
				if (waiting != before)
					rotation_log_.push_back(waiting.empty() ? "the rotation of " + svc.name + ".outbox goes on"
					                                        : "the rotation of " + svc.name + ".outbox waits for " + waiting +
					                                              " (relaying goes on; chat_outbox.status, rotation_wait)");
				before = waiting;
			}
		} catch (const PgFailure &f) {
			if (f.lost)
				throw;
			before_1_2_.erase(svc.name);
		}
		if (inbox_retention == "0")
			continue;
		const std::string sql = Statement(relay_sql::kPurgeInbox, svc.name);
		for (int round = 0; round < 100; round++) {
			int deleted;
			try {
				Result r(Exec(sql, {inbox_retention, std::to_string(kLimit)}, PGRES_COMMAND_OK));
				deleted = std::atoi(PQcmdTuples(r.get()));
			} catch (const PgFailure &f) {
				if (f.lost)
					throw;
				break; // a service without its table: its pass reports it
			}
			total += deleted;
			if (deleted < kLimit)
				break;
		}
	}
	return total;
}

bool
OutboxDb::DrainNotifications()
{
	bool any = false;
	PQconsumeInput(conn_);
	while (PGnotify *n = PQnotifies(conn_)) {
		any = true;
		PQfreemem(n);
	}
	return any;
}

bool
OutboxDb::WaitForWake(int64_t timeout_ms, int also_fd)
{
	if (!conn_)
		return false;
	if (DrainNotifications())
		return true;
	int fd = PQsocket(conn_);
	fd_set in;
	FD_ZERO(&in);
	FD_SET(fd, &in);
	if (also_fd >= 0)
		FD_SET(also_fd, &in);
	struct timeval tv = {static_cast<time_t>(timeout_ms / 1000), static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
	int rc = select(std::max(fd, also_fd) + 1, &in, nullptr, nullptr, &tv);
	if (rc <= 0 || !FD_ISSET(fd, &in))
		return false; // timeout, a signal (the caller checks its stop flag), or also_fd
	if (!PQconsumeInput(conn_)) {
		Disconnect();
		throw PgFailure(true, "connection lost while waiting");
	}
	return DrainNotifications();
}

} // namespace chat_outbox::relay
