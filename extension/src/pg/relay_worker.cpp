/*
 * extension/src/pg/relay_worker.cpp - the relay: one background worker for every service.
 *
 * Loop: refresh the service list (chat_outbox.services) about once per poll interval; for each
 * service run one pass (relay_pass.cpp) in its own transaction; repeat while a pass came back
 * full; then sleep on the latch until a commit wakes us (wake_at_commit.cpp) or poll_interval
 * passes. When Redis fails, the pass rolls back, the worker backs off as every server retry does
 * (common/backoff.hpp, kServerRetryFirstMs doubling to kServerRetryMaxMs) and logs once per outage.
 * What a failed or waiting service, a shard down and Redis down mean for the round is decided in
 * common/relay/ (service_standing.hpp, shard_outage.hpp, relay_health.hpp), as chat-outbox-relay
 * decides it (relay/src/relay_loop.cpp); this file logs, records and sleeps. Nothing is kept in
 * memory between passes: the outbox is the only queue.
 *
 * The worker's own commits run with synchronous_commit = off. Losing one in a crash only means
 * the rows go again, and BullMQ turns the repeat into a `duplicated` event. Its transactions are
 * READ COMMITTED whatever default_transaction_isolation says (a pass's ticks need it).
 *
 * C-style on purpose: an ERROR longjmps back to the sigsetjmp in RelayMain, so no frame of this
 * loop owns a C++ object with a destructor.
 */
#include "pg/guc.hpp"
#include "pg/relay_pass.hpp"

#include "common/backoff.hpp"
#include "common/cluster_map_watch.hpp"
#include "common/relay/purge_interval.hpp"
#include "common/relay/relay_health.hpp"
#include "pg/cpp_boundary.hpp"

extern "C" {
PGDLLEXPORT void chat_outbox_relay_main(Datum main_arg);
}

/*
 * Purge at the pace both relays share (common/relay/purge_interval.hpp: about twice per retention
 * period, at least every 1 s and at most every 10 s). The outbox
 * is not purged row by row: each round runs one step of its rotation per service (truncate the oldest
 * generation once the cursors are past it, switch generations; sql/parts/outbox.sql). The inbox purge
 * runs between relay rounds, one transaction of PURGE_BATCH rows per service at a time,
 * so a relay round waits for those few transactions, never a run of them per table (figures in
 * docs/journal/relay.md). While a transaction finds rows to delete, the next
 * follows PURGE_BEHIND_MS later, so the purge keeps up with any send rate (100,000 rows/s at most).
 * Each transaction looks at the PURGE_BATCH oldest rows only, so the purge goes on while it finds
 * anything to delete: a row sent late (a long transaction's) that sits among old ones is stepped
 * over, not a stop.
 */
#define PURGE_EVERY_MS chat_outbox::PurgeIntervalMs(chat_outbox_retention, chat_outbox_inbox_retention)
#define PURGE_BEHIND_MS 10
#define PURGE_BATCH 1000

static chat_outbox::RelayHealth relay_health;

/* RetentionInForce: an outbox or inbox retention is set, so purge rounds run. */
static bool
RetentionInForce(void)
{
	return chat_outbox_retention > 0 || chat_outbox_inbox_retention > 0;
}

static void		   BackOff(long ms);
static bool		   services_stale = true;
static bool		   extension_present = false;
static TimestampTz next_refresh = 0;
static uint32	   seen_services_generation = 0;
static TimestampTz last_busy_round_end = 0; /* end of the last round that relayed 2+ rows */
static TimestampTz last_full_round = 0;		/* last round over every service */
static uint32	   still_full = 0;			/* services whose last batch came back full */
static TimestampTz next_purge = 0;
static char		   logged_warning[CHAT_OUTBOX_ERRLEN];

typedef struct ServiceName
{
	char   name[NAMEDATALEN];
	uint32 bit; /* its bit in relay_shared->dirty_services */
} ServiceName;

static ServiceName worker_services[CHAT_OUTBOX_MAX_SERVICES];
static int		   worker_nservices = 0;

static void
RelayWorkerExit(int code, Datum arg)
{
	if (!relay_shared)
		return;
	pg_atomic_write_u32(&relay_shared->worker_procno, INVALID_PGPROCNO_U32);
	pg_atomic_write_u32(&relay_shared->worker_listening, 0);
	RelaySetState(RELAY_STOPPED);
}

static void
BeginWork(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
EndWork(bool commit)
{
	SPI_finish();
	PopActiveSnapshot();
	if (commit)
		CommitTransactionCommand();
	else
		AbortCurrentTransaction();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, nullptr);
}

/*
 * ExtensionLocked: whether the extension exists, holding it (a share lock on it until the transaction
 * ends) so that a DROP EXTENSION waits for the transaction instead of removing its tables between the
 * look-up and the query. A drop that committed before the lock was granted is seen by the look-up
 * after it (granting a lock reads the catalog's invalidations).
 */
static bool
ExtensionLocked(void)
{
	Oid ext = get_extension_oid("chat_outbox", true);

	if (!OidIsValid(ext))
		return false;
	LockDatabaseObject(ExtensionRelationId, ext, 0, AccessShareLock);
	return get_extension_oid("chat_outbox", true) == ext;
}

/* RefreshServices rereads chat_outbox.services, so create_service() and queue UPDATEs apply without a restart. */
static void
RefreshServices(void)
{
	BeginWork("chat_outbox relay: reading services");
	extension_present = ExtensionLocked();
	worker_nservices = 0;
	if (extension_present) {
		int ret = SPI_execute("SELECT name, queue FROM chat_outbox.services ORDER BY name", true, 0);

		if (ret != SPI_OK_SELECT)
			elog(ERROR, "chat_outbox: reading chat_outbox.services failed: %s", SPI_result_code_string(ret));
		for (uint64 i = 0; i < SPI_processed && worker_nservices < CHAT_OUTBOX_MAX_SERVICES; i++) {
			char *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
			char *queue = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);

			RelayServiceFor(name, queue);
			strlcpy(worker_services[worker_nservices].name, name, NAMEDATALEN);
			worker_services[worker_nservices++].bit = RelayServiceBit(name);
		}
	}
	EndWork(true);
	services_stale = false;
	next_refresh = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), Max(chat_outbox_poll_interval, 1000));
}

typedef enum ServiceWork
{
	WORK_PASS,		   /* read -> push */
	WORK_PURGE_OUTBOX, /* delete sent rows past retention */
	WORK_PURGE_INBOX   /* delete received rows past inbox_retention */
} ServiceWork;

/*
 * RunServiceWork runs one transaction of `work` on one service. An ERROR in it (a table dropped or
 * replaced under the relay, a trigger that raises) is caught here, rolled back, and returned as a
 * FAILURE_SERVICE, so one service's SQL never stops the others. Returns the rows done, or -1 with
 * *failure set (a Redis failure of a pass comes back the same way, with its own kind).
 *
 * The frames between here and the ERROR are C or C-style C++ without destructors (relay_pass.cpp,
 * redis_sink.cpp), so the longjmp to PG_CATCH skips nothing.
 */
static int
RunServiceWork(RelayService *svc, ServiceWork work, SinkFailure *failure)
{
	static const char *const activity[] = {"chat_outbox relay: pass", "chat_outbox relay: rotating the outbox",
										   "chat_outbox relay: purging the inbox"};
	volatile int			 n = -1;
	volatile bool			 caught = false;

	BeginWork(activity[work]);
	if (!SearchSysCacheExists1(NAMESPACENAME, CStringGetDatum(svc->name))) {
		bool extension_gone = !OidIsValid(get_extension_oid("chat_outbox", true));

		EndWork(true);
		if (extension_gone) {
			/* dropped since the last refresh (DROP EXTENSION): go quiet instead of failing on vanished tables */
			extension_present = false;
			services_stale = true;
			return 0;
		}
		/* a registered service whose schema was dropped by hand: that service's failure only */
		failure->kind = FAILURE_SERVICE;
		snprintf(failure->message, sizeof failure->message, "schema \"%s\" does not exist", svc->name);
		return -1;
	}
	PG_TRY();
	{
		switch (work) {
			case WORK_PASS:
				n = RelayPass(svc, chat_outbox_batch_size, nullptr, failure);
				break;
			case WORK_PURGE_OUTBOX:
				n = RelayRotate(svc, chat_outbox_retention);
				break;
			case WORK_PURGE_INBOX:
				n = RelayPurgeInbox(svc, chat_outbox_inbox_retention, PURGE_BATCH);
				break;
		}
	}
	PG_CATCH();
	{
		ErrorData *edata;

		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		FlushErrorState();
		failure->kind = FAILURE_SERVICE;
		strlcpy(failure->message, edata->message, sizeof failure->message);
		FreeErrorData(edata);
		AbortCurrentTransaction();
		RESUME_INTERRUPTS();
		caught = true;
	}
	PG_END_TRY();
	if (caught) {
		pgstat_report_activity(STATE_IDLE, nullptr);
		RelayForgetPlans(svc); /* a replaced table needs new plans */
		return -1;
	}
	EndWork(n >= 0);
	return n;
}

/*
 * ServiceDue: a failing service waits out its own backoff, and a waiting one (a change of its
 * partition count, a shard down) looks again later (common/relay/service_standing.hpp); the others
 * are not held by it.
 */
static bool
ServiceDue(const RelayService *svc)
{
	return svc->standing.Due(RelayNowMs());
}

/* ShardsUp: bit s set while shard s is not backing off (redis_sink.cpp). */
static uint32
ShardsUp(void)
{
	uint32 up = 0;

	for (int s = 0; s < RedisSinkShards(); s++)
		if (RedisSinkShardUp(s))
			up |= (uint32) 1 << s;
	return up;
}

/*
 * ServiceFailed backs a service off and logs its failure once, when it starts
 * (common/relay/service_standing.hpp); the status view shows the current reason.
 */
static void
ServiceFailed(RelayService *svc, const SinkFailure *failure)
{
	if (svc->standing.Failed(failure->message, RelayNowMs()) == chat_outbox::FailureNews::kStarted)
		ereport(LOG, (errmsg("chat_outbox relay: service \"%s\" cannot be relayed: %s", svc->name, failure->message),
					  errdetail("Its rows stay in the outbox; the other services go on. Retrying with backoff up to %d s.",
								(int) (chat_outbox::kServerRetryMaxMs / 1000))));
	RelaySetServiceError(svc->name, failure->message);
	RelaySetError(failure->message);
}

static void
ServiceWorks(RelayService *svc)
{
	if (!svc->standing.Worked())
		return;
	ereport(LOG, (errmsg("chat_outbox relay: service \"%s\" relays again", svc->name)));
	RelaySetServiceError(svc->name, "");
}

/*
 * PurgeOne runs one purge transaction on a service; true when it deleted rows (the purge is behind).
 * A purge that fails (a dropped inbox) is that service's purge failure only: logged once until it
 * works again, retried at the next purge round, and it never holds back the service's relaying.
 */
static bool
PurgeOne(RelayService *svc, ServiceWork work)
{
	SinkFailure failure;
	int			n;
	const char *table = work == WORK_PURGE_INBOX ? "inbox" : "outbox";
	int		   *failures = &svc->purge_failures[work == WORK_PURGE_INBOX];

	if (!extension_present)
		return false;
	n = RunServiceWork(svc, work, &failure);
	if (n < 0) {
		if ((*failures)++ == 0)
			ereport(LOG, (errmsg("chat_outbox relay: purging %s.%s failed: %s", svc->name, table, failure.message),
						  errdetail("Relaying goes on; the purge is tried again every purge round.")));
		RelaySetError(failure.message);
		return false;
	}
	if (*failures > 0)
		ereport(LOG, (errmsg("chat_outbox relay: purging %s.%s works again", svc->name, table)));
	*failures = 0;
	return n > 0;
}

static void
PurgeOldRows(void)
{
	if (!RetentionInForce() || GetCurrentTimestamp() < next_purge)
		return;
	bool behind = false;

	for (int i = 0; i < worker_nservices; i++) {
		RelayService *svc = RelayServiceFind(worker_services[i].name);

		if (chat_outbox_retention > 0)
			behind |= PurgeOne(svc, WORK_PURGE_OUTBOX);
		if (chat_outbox_inbox_retention > 0)
			behind |= PurgeOne(svc, WORK_PURGE_INBOX);
	}
	next_purge = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), behind ? PURGE_BEHIND_MS : PURGE_EVERY_MS);
}

static void
ReloadIfPending(void)
{
	if (!ConfigReloadPending)
		return;
	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	services_stale = true;
}

/* WaitForWork sleeps until the latch is set (a commit, a signal) or `ms` pass. */
static void
WaitForWork(long ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/*
 * WaitForCommits is the only sleep a commit cuts short (wake_at_commit.cpp sets the latch only
 * while worker_listening is 1). Listening first and checking the dirty bits after, each with a
 * full barrier, means a commit that raced with falling asleep is seen here or wakes the worker.
 */
static void
WaitForCommits(void)
{
	long ms = chat_outbox_poll_interval;

	if (RetentionInForce()) /* a purge that is due (every 10 ms while behind) does not wait for a commit */
		ms = Min(ms, Max(0, TimestampDifferenceMilliseconds(GetCurrentTimestamp(), next_purge)));
	pg_atomic_exchange_u32(&relay_shared->worker_listening, 1);
	if (pg_atomic_read_u32(&relay_shared->dirty_services) == 0)
		WaitForWork(ms);
	pg_atomic_exchange_u32(&relay_shared->worker_listening, 0);
}

/*
 * CoalesceWakeups: a stream of commits would otherwise cost one pass (a transaction, a Redis round
 * trip, an UPDATE) per commit. After a round that relayed more than one row (commits arrived while
 * the last pass ran), the next waits until min_pass_interval has passed, so rows committed
 * meanwhile share it. A round that relayed a single row (a paced sender) delays nothing.
 */
static bool
CoalesceWakeups(void)
{
	int64 wait_us = (int64) chat_outbox_min_pass_interval * 1000 - (GetCurrentTimestamp() - last_busy_round_end);

	if (last_busy_round_end == 0 || wait_us <= 0)
		return false;
	/* sleeps through (and so consumes) wake-ups: the caller must run a round afterwards */
	BackOff((long) ((wait_us + 999) / 1000));
	return true;
}

/*
 * BackOff sleeps `ms` through commit wake-ups; a signal (SIGTERM, SIGHUP) cuts it short, and so does a
 * Redis Cluster naming a new master in place of the one lost (RedisSinkPromoted, asked every
 * kClusterRefreshMs while one is: common/cluster_map_watch.hpp), so the relay follows a failover as
 * soon as the cluster's map says it is done, not after the backoff.
 */
static void
BackOff(long ms)
{
	TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);

	for (;;) {
		long left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);

		if (left <= 0)
			return;
		if (RedisSinkAwaitingPromotion())
			left = Min(left, (long) chat_outbox::kClusterRefreshMs);
		WaitForWork(left);
		if (ConfigReloadPending)
			return;
		if (RedisSinkAwaitingPromotion() && RedisSinkPromoted())
			return;
	}
}

static void
PublishRedisWarning(void)
{
	const char *w = RedisSinkWarning();

	RelaySetRedisWarning(w, RedisSinkAppendfsync());
	if (w[0] && strcmp(w, logged_warning) != 0)
		ereport(WARNING, (errmsg("chat_outbox relay: redis is not durable: %s", w),
						  errdetail("A message is only as safe as Redis once relayed."),
						  errhint("Run Redis with appendonly yes, appendfsync everysec or always, and maxmemory-policy "
								  "noeviction.")));
	strlcpy(logged_warning, w, sizeof logged_warning);
}

static void
HandleFailure(const SinkFailure *failure)
{
	bool log_it = false;
	long delay = 0;

	/* an outage whose cause changes (a wrong CA fixed, the certificate now expired) says so: the rule's own */
	chat_outbox::CallCpp([&] { delay = (long) relay_health.OnFailure(failure->message, &log_it); });
	if (log_it)
		ereport(LOG, (errmsg("chat_outbox relay: redis unreachable: %s", failure->message),
					  errdetail("Rows stay in the outbox; retrying with backoff up to %d s.",
								(int) (chat_outbox::kServerRetryMaxMs / 1000))));
	RelaySetError(failure->message);
	RelaySetState(RELAY_BACKING_OFF);
	BackOff(delay);
}

typedef enum RoundResult
{
	ROUND_DONE,	 /* every outbox drained */
	ROUND_MORE,	 /* some batch came back full: go again before sleeping */
	ROUND_FAILED /* Redis failed (already backed off) or a signal interrupted */
} RoundResult;

/*
 * RelayRound runs one pass per service, each in its own transaction: every service once per poll
 * interval, otherwise only those a commit marked dirty or whose last batch came back full.
 */
static RoundResult
RelayRound(void)
{
	SinkFailure failure;
	bool		more = false;
	int64		relayed = 0;
	uint32		up;
	bool		log_it;
	int64		total;
	uint32		todo = pg_atomic_exchange_u32(&relay_shared->dirty_services, 0) | still_full;
	TimestampTz now = GetCurrentTimestamp();

	if (relay_health.Failing() || now - last_full_round >= (int64) chat_outbox_poll_interval * 1000) {
		todo = PG_UINT32_MAX;
		last_full_round = now;
	}
	still_full = 0;

	if (!RedisSinkEnsureConnected(&failure)) {
		last_full_round = 0;
		if (failure.kind != FAILURE_INTERRUPTED)
			HandleFailure(&failure);
		return ROUND_FAILED;
	}
	PublishRedisWarning();
	for (int i = 0; i < worker_nservices; i++) {
		RelayService *svc;
		int			  n;

		if (!(todo & worker_services[i].bit))
			continue;
		svc = RelayServiceFind(worker_services[i].name);
		if (!ServiceDue(svc))
			continue; /* retried at a full round once its backoff is over */
		up = ShardsUp();
		n = RunServiceWork(svc, WORK_PASS, &failure);
		if (n < 0 && failure.kind == FAILURE_LAYOUT_WAIT) {
			/* rolled back; the status view shows the wait (RelaySetServiceLayout). Looked at again
			 * soon, and at every full round: once the old queues are empty the change goes through. */
			svc->standing.WaitForLayout(RelayNowMs());
			still_full |= worker_services[i].bit;
			continue;
		}
		if (n < 0 && (failure.kind == FAILURE_LAYOUT_CHANGED || failure.kind == FAILURE_MARK_CHANGED)) {
			/*
			 * Rolled back, nothing of the refused call written: the layout key changed under the service
			 * (another relay, an operator, a Redis that lost it), or a partition's mark was not the one
			 * the committed passes wrote (Redis lost writes under a connection that stayed, or another
			 * relay's pass wrote and rolled back). No error and no backoff: the next pass, at once,
			 * reads the key and decides by it (relay_pass.cpp, ChooseLayout), or reads the marks and
			 * sends again what Redis lost (CheckMarks). Each is logged.
			 */
			bool layout = failure.kind == FAILURE_LAYOUT_CHANGED;

			ereport(LOG, (errmsg("chat_outbox relay: service \"%s\": %s%s", svc->name, layout ? "layout changed: " : "",
								 failure.message),
						  errdetail(layout ? "The pass wrote nothing; the next one reads the layout key again."
										   : "The pass wrote nothing; the next one checks what Redis kept.")));
			still_full |= worker_services[i].bit;
			more = true;
			continue;
		}
		if (n < 0 && failure.kind == FAILURE_SHARD) {
			/*
			 * Rolled back; the shard backs off (logged by the sink). One that just failed: the next
			 * pass, at once, leaves its partitions out, so the other shards' partitions go on. One
			 * that was down already: this service looks again later (ServiceStanding::ShardFailed).
			 */
			RelaySetError(failure.message);
			still_full |= worker_services[i].bit;
			if (svc->standing.ShardFailed((up & ((uint32) 1 << failure.shard)) != 0, RelayNowMs()))
				more = true;
			continue;
		}
		if (n < 0 && failure.kind == FAILURE_SERVICE) {
			ServiceFailed(svc, &failure);
			continue;
		}
		if (n < 0) {
			/* the dirty bits taken above are lost with this round: make the next one full */
			last_full_round = 0;
			if (failure.kind != FAILURE_INTERRUPTED)
				HandleFailure(&failure);
			return ROUND_FAILED;
		}
		ServiceWorks(svc);
		relayed += n;
		if (chat_outbox::MoreToDrain(n, (int64) chat_outbox_batch_size * RELAY_PASS_MAX_BATCHES)) {
			more = true;
			still_full |= worker_services[i].bit;
		}
	}
	RelaySetState(RELAY_RUNNING);
	/* one row per round is a paced sender: never delay it. More means commits are streaming in. */
	if (relayed > 1)
		last_busy_round_end = GetCurrentTimestamp();
	relay_health.OnSuccess(relayed, !more, &log_it, &total); /* no-throw: clearing a string */
	if (log_it)
		ereport(LOG, (errmsg("chat_outbox relay: redis back, relayed %lld", (long long) total)));
	return more ? ROUND_MORE : ROUND_DONE;
}

/*
 * WaitWhileStandby returns at once on a primary. On a standby (RecoveryInProgress: streaming or
 * archive recovery, Patroni's replica) nothing can be marked sent, so the worker does not touch
 * Redis or the outboxes: it says so once, shows "standby", and checks every 100 ms (a shared
 * memory read; a signal cuts the wait short), so a promotion costs at most that before the first
 * pass. After a promotion the same session can write, and relaying starts at the next check.
 */
static void
WaitWhileStandby(void)
{
	if (!RecoveryInProgress())
		return;
	ereport(LOG, (errmsg("chat_outbox relay: this server is a standby; relaying starts when it is promoted")));
	RedisSinkDisconnect();
	RelaySetState(RELAY_STANDBY);
	while (RecoveryInProgress()) {
		WaitForWork(100);
		ReloadIfPending();
	}
	ereport(LOG, (errmsg("chat_outbox relay: this server was promoted; relaying")));
	RelaySetState(RELAY_STARTING);
	services_stale = true;
	last_full_round = 0;
}

typedef enum DatabaseLook
{
	DATABASE_MISSING,
	DATABASE_REFUSING, /* ALLOW_CONNECTIONS false: every connection is a FATAL */
	DATABASE_READY
} DatabaseLook;

static DatabaseLook
LookAtDatabase(void)
{
	DatabaseLook look = DATABASE_MISSING;
	Oid			 oid;

	StartTransactionCommand();
	oid = get_database_oid(chat_outbox_database, true);
	if (OidIsValid(oid)) {
		HeapTuple tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(oid));

		if (HeapTupleIsValid(tup)) {
			look = ((Form_pg_database) GETSTRUCT(tup))->datallowconn ? DATABASE_READY : DATABASE_REFUSING;
			ReleaseSysCache(tup);
		}
	}
	CommitTransactionCommand();
	return look;
}

/*
 * WaitForDatabase runs instead of connecting when the two previous starts died connecting (both
 * left `connecting` raised). Connecting to a database that does not exist, or that does not allow
 * connections, is a FATAL, and the postmaster restarts the worker every second: one FATAL a second
 * for as long as it lasts. So this start connects to the shared catalogs only, says once what it
 * waits for (again if that changes), polls pg_database, and exits to be restarted (and connect)
 * once the database can be connected to. If it can at the first look, it was either created since
 * (a setup script creating it right after the server starts) or the FATAL had another cause,
 * already logged: the first time the restart connects at once, and each further failure in a row
 * waits twice as long (1 s, 2 s, ... 60 s).
 */
static void
WaitForDatabase(void)
{
	DatabaseLook said = DATABASE_READY; /* nothing said yet */

	BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);
	RelaySetState(RELAY_WAITING_FOR_DATABASE);
	for (int checks = 0;; checks++) {
		DatabaseLook look = LookAtDatabase();

		if (look == DATABASE_READY) {
			pg_atomic_write_u32(&relay_shared->connecting, 0); /* the next start connects */
			if (checks == 0) {
				uint32 retries = pg_atomic_fetch_add_u32(&relay_shared->connect_retries, 1);

				if (retries > 0)
					WaitForWork(chat_outbox::Backoff(1000, 60000).Delay(retries - 1));
			} else
				ereport(LOG, (errmsg("chat_outbox relay: database \"%s\" %s now; restarting to connect to it",
									 chat_outbox_database, said == DATABASE_MISSING ? "exists" : "allows connections")));
			proc_exit(1);
		}
		if (look != said && look == DATABASE_MISSING)
			ereport(LOG, (errmsg("chat_outbox relay: database \"%s\" does not exist; waiting for it",
								 chat_outbox_database),
						  errhint("Create the database, or set chat_outbox.database to an existing one and restart "
								  "the server.")));
		else if (look != said)
			ereport(LOG, (errmsg("chat_outbox relay: database \"%s\" does not allow connections; waiting for it",
								 chat_outbox_database),
						  errhint("ALTER DATABASE %s ALLOW_CONNECTIONS true, or set chat_outbox.database to another "
								  "database and restart the server.",
								  quote_identifier(chat_outbox_database))));
		said = look;
		WaitForWork(1000);
	}
}

void
chat_outbox_relay_main(Datum main_arg)
{
	sigjmp_buf local_sigjmp_buf;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	/* published before connecting, so chat_outbox.status shows a worker waiting for its database */
	before_shmem_exit(RelayWorkerExit, 0);
	SpinLockAcquire(&relay_shared->mutex);
	relay_shared->worker_pid = MyProcPid;
	relay_shared->state = RELAY_STARTING;
	SpinLockRelease(&relay_shared->mutex);
	pg_atomic_write_u32(&relay_shared->worker_procno, MyProcIndex());
	/* two tries first: a setup script often creates the database just after the server starts */
	if (pg_atomic_fetch_add_u32(&relay_shared->connecting, 1) >= 2)
		WaitForDatabase(); /* exits */
	BackgroundWorkerInitializeConnection(chat_outbox_database, nullptr, 0);
	pg_atomic_write_u32(&relay_shared->connecting, 0);
	pg_atomic_write_u32(&relay_shared->connect_retries, 0);
	SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);
	/*
	 * A pass needs READ COMMITTED (each tick a snapshot of its own): the worker's transactions take it
	 * whatever default_transaction_isolation the server, database or role sets.
	 */
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	RelayUseIndexOrderForSession();
	pgstat_report_appname("chat_outbox relay");

	if (sigsetjmp(local_sigjmp_buf, 1) != 0) {
		/* an ERROR in a pass (a dropped table, a bug): report it, roll back, carry on */
		ErrorData *edata;

		error_context_stack = nullptr;
		HOLD_INTERRUPTS();
		EmitErrorReport();
		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		RelaySetError(edata->message);
		FreeErrorData(edata);
		AbortCurrentTransaction();
		FlushErrorState();
		RedisSinkDisconnect();
		RelayForgetServices();
		services_stale = true;
		last_full_round = 0;
		RESUME_INTERRUPTS();
		RelaySetState(RELAY_BACKING_OFF);
		BackOff(1000);
	}
	PG_exception_stack = &local_sigjmp_buf;

	for (;;) {
		CHECK_FOR_INTERRUPTS();
		ReloadIfPending();
		WaitWhileStandby();
		redis_sink_latch_seen = false;
		if (!chat_outbox_relay_enabled) {
			RelaySetState(RELAY_PAUSED);
			WaitForWork(chat_outbox_poll_interval);
			continue;
		}
		if (pg_atomic_read_u32(&relay_shared->services_generation) != seen_services_generation) {
			seen_services_generation = pg_atomic_read_u32(&relay_shared->services_generation);
			services_stale = true;
		}
		if (services_stale || GetCurrentTimestamp() >= next_refresh)
			RefreshServices();
		if (!extension_present) {
			RelaySetState(RELAY_WAITING_FOR_EXTENSION);
			WaitForWork(chat_outbox_poll_interval);
			continue;
		}
		if (RelayRound() != ROUND_DONE || !extension_present)
			continue;
		/* before coalescing, not after: while commits stream in, every round coalesces, so a purge
		 * after the coalescing would run only in the stream's gaps and fall behind for as long as
		 * the stream lasts; here its one transaction takes time that the coalescing wait then does
		 * not add */
		PurgeOldRows();
		if (CoalesceWakeups())
			continue;
		if (redis_sink_latch_seen)
			continue;
		WaitForCommits();
	}
}
