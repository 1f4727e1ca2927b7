/*
 * extension/src/pg/redis_sink.cpp - write BullMQ batches to Redis without ever blocking.
 *
 * hiredis runs in non-blocking mode and every wait is a WaitLatchOrSocket on its socket, so a
 * SIGTERM or SIGHUP (which set the latch) is answered at once even while Redis hangs, and the
 * wait never outlives chat_outbox.redis_timeout. Nothing is buffered here between calls: a
 * failure drops the connection and the caller rolls back, so the rows stay in the outbox.
 *
 * This file is C-style on purpose. Postgres may longjmp out of any wait (WL_EXIT_ON_PM_DEATH,
 * ereport), so no frame here owns a C++ object; core C++ runs only inside CallCpp, and every C++
 * object (the request bytes, the parsed URL) lives in the one static RedisSink below.
 */
#include "pg/redis_sink.hpp"

#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/bullmq_batch_add.hpp"
#include "core/job_id.hpp"
#include "redis_safety.hpp"
#include "core/resp.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"
#include "redis_handshake.hpp"
#include "redis_script.hpp"
#include "redis_sentinel.hpp"
#include "redis_url.hpp"

bool		redis_sink_latch_seen = false;

/*
 * The sink is one connection and at most one batch, driven by one state machine (SinkState).
 *
 *   kDisconnected --RedisSinkEnsureConnected--> kConnecting --handshake read--> kIdle
 *   kIdle --RedisSinkSend--> kInFlight --its reply read (RedisSinkAwait)--> kIdle
 *   any state --a failure (SinkFail), a signal, or RedisSinkDisconnect--> kDisconnected
 *
 * What holds in each state:
 *   kDisconnected  ctx is NULL. No reply is owed.
 *   kConnecting    ctx is a connection being set up to `url`: the connect, then the handshake
 *                  (HandshakeCommands, SCRIPT LOAD, CONFIG GETs), whose replies are not all read.
 *                  Only RedisSinkEnsureConnected is in this state; it is still here afterwards
 *                  only if an ERROR cut the setup short, and then the next call starts again.
 *   kIdle          ctx is connected to connected_url and handshaken: script_sha, warning and
 *                  appendfsync describe it. Every reply has been read.
 *   kInFlight      as kIdle, and a batch was written on ctx (perhaps partly) whose reply is unread.
 *                  Its request bytes are in `request` and its rows' outbox ids in row_ids (job
 *                  order), so it can go again (after NOSCRIPT, or on a new connection) without the
 *                  rows, which the caller may free as soon as RedisSinkSend returns.
 *
 * Who moves it: RedisSinkEnsureConnected alone connects (to kIdle). RedisSinkSend enters kInFlight,
 * and RedisSinkAwait enters it again only to send the same batch once more (after NOSCRIPT, or on a
 * new connection); the batch's reply, read whole (success, NOSCRIPT or an error reply about this
 * batch only), returns to kIdle. Any other failure drops the connection (SinkFail). A RedisSinkSend that
 * finds kInFlight (an ERROR came between the last Send and its Await) drops the connection too:
 * the unread reply would be taken for the new batch's. A failed RedisSinkSend or RedisSinkAwait
 * never leaves kInFlight behind.
 *
 * The batch's fields (request, row_ids, may_resend, deadline) stay as the last RedisSinkSend set
 * them while it is sent again inside one Send or Await, through kDisconnected and kConnecting.
 *
 * One static instance: its C++ members (strings, vectors, the parsed URL) live as long as the
 * process, so no frame of this file owns a C++ object and a longjmp through it leaks nothing.
 * Those members are changed only inside CallCpp, where an exception cannot reach Postgres.
 */
enum class SinkState
{
	kDisconnected,
	kConnecting,
	kIdle,
	kInFlight,
};

struct RedisSink
{
	SinkState	state = SinkState::kDisconnected;
	redisContext *ctx = nullptr;

	/* the connection's target and what its handshake learned */
	chat_outbox::RedisUrl url;	/* parsed chat_outbox.redis_url of the connection being set up or in use */
	char	   *connected_url = nullptr;	/* TopMemoryContext copy of that URL, set once kIdle is reached */
	char		script_sha[64] = "";	/* the batch-add script's sha ("": send the text with EVAL) */
	char		warning[CHAT_OUTBOX_ERRLEN] = "";
	char		appendfsync[32] = "";
	std::vector<std::vector<std::string>> handshake_commands;	/* HandshakeCommands(url) */
	std::string handshake;		/* the handshake's (or a reload's SCRIPT LOAD) request bytes */

	/* the batch of the last RedisSinkSend */
	std::string request;
	std::vector<int64_t> row_ids;
	bool		may_resend = false; /* sent on a connection that existed before the batch: once more
									 * on a new one if that connection turns out dead */
	TimestampTz deadline = 0;	/* set when the wait starts: the time Postgres spent between Send and
								 * Await is not Redis' */
	std::vector<std::string> job_ids;	/* encoding scratch: jobs points into job_ids */
	std::vector<chat_outbox::JobSpec> jobs;

	bool		timed_out = false;	/* the last failure was a timeout, not a closed connection */

	/* redis-sentinel:// only: where discovery starts, and the master last found (for the log) */
	size_t		sentinel_cursor = 0;
	char		master[300] = "";
};

static RedisSink sink;

static void
SinkFail(SinkFailure *failure, const char *what, const char *why)
{
	failure->kind = FAILURE_CONNECTION;
	snprintf(failure->message, sizeof failure->message, "%s: %s", what, why);
	RedisSinkDisconnect();
}

void
RedisSinkDisconnect(void)
{
	if (sink.ctx)
		redisFree(sink.ctx);
	sink.ctx = nullptr;
	sink.state = SinkState::kDisconnected;
}

const char *
RedisSinkWarning(void)
{
	return sink.warning;
}

const char *
RedisSinkAppendfsync(void)
{
	return sink.appendfsync;
}

static bool
SinkShouldAbort(void)
{
	return ProcDiePending || QueryCancelPending || (IsBackgroundWorker && ConfigReloadPending);
}

/* SinkWait waits for `events` on the Redis socket until `deadline`; false on timeout or signal. */
static bool
SinkWait(int events, TimestampTz deadline, SinkFailure *failure)
{
	for (;;) {
		long		timeout_ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		int			rc;

		if (timeout_ms <= 0) {
			SinkFail(failure, "timeout", "no answer within chat_outbox.redis_timeout");
			sink.timed_out = true;
			return false;
		}
		rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events, sink.ctx->fd,
							   timeout_ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET) {
			ResetLatch(MyLatch);
			redis_sink_latch_seen = true;
			if (SinkShouldAbort()) {
				RedisSinkDisconnect(); /* the reply stream is now out of step */
				failure->kind = FAILURE_INTERRUPTED;
				strlcpy(failure->message, "interrupted", sizeof failure->message);
				return false;
			}
		}
		if (rc & events)
			return true;
	}
}

static bool
SinkFlush(TimestampTz deadline, SinkFailure *failure)
{
	int			done = 0;

	for (;;) {
		if (redisBufferWrite(sink.ctx, &done) == REDIS_ERR) {
			SinkFail(failure, "write", sink.ctx->errstr);
			return false;
		}
		if (done)
			return true;
		if (!SinkWait(WL_SOCKET_WRITEABLE, deadline, failure))
			return false;
	}
}

/* SinkRead returns the next reply (caller frees it), or NULL after a failure. */
static redisReply *
SinkRead(TimestampTz deadline, SinkFailure *failure)
{
	for (;;) {
		void	   *reply = nullptr;

		if (redisGetReplyFromReader(sink.ctx, &reply) == REDIS_ERR) {
			SinkFail(failure, "protocol", sink.ctx->errstr);
			return nullptr;
		}
		if (reply)
			return (redisReply *) reply;
		if (!SinkWait(WL_SOCKET_READABLE, deadline, failure))
			return nullptr;
		if (redisBufferRead(sink.ctx) == REDIS_ERR) {
			SinkFail(failure, "read", sink.ctx->errstr[0] ? sink.ctx->errstr : "connection closed");
			return nullptr;
		}
	}
}

/* SinkAppend queues already-encoded commands on the connection; SinkFlush sends them. */
static bool
SinkAppend(const std::string &commands, SinkFailure *failure)
{
	if (redisAppendFormattedCommand(sink.ctx, commands.data(), commands.size()) != REDIS_OK) {
		SinkFail(failure, "write", "out of memory");
		return false;
	}
	return true;
}

/* SinkSendBatch writes the batch in sink.request: from kIdle to kInFlight (kDisconnected on failure). */
static bool
SinkSendBatch(TimestampTz deadline, SinkFailure *failure)
{
	sink.state = SinkState::kInFlight;
	return SinkAppend(sink.request, failure) && SinkFlush(deadline, failure);
}

/* EncodeScriptLoad appends SCRIPT LOAD of the batch-add script (C++ that may throw: call inside CallCpp). */
static void
EncodeScriptLoad(std::string *out)
{
	chat_outbox::RespCommand(out, 3).Arg("SCRIPT").Arg("LOAD").Arg(chat_outbox::BatchAddScript());
}

/* ParseTarget parses url into sink.url; false with *error set when it is malformed. */
static bool
ParseTarget(const char *url, char *error, size_t error_size)
{
	bool		ok = false;

	chat_outbox::CallCpp([&] {
		std::string why;
		auto parsed = chat_outbox::ParseRedisUrl(url, &why);
		if (!parsed) {
			strlcpy(error, why.c_str(), error_size);
			return;
		}
		sink.url = std::move(*parsed);
		ok = true;
	});
	return ok;
}

/*
 * SinkDiscoverMaster points sink.url at the master the sentinels name (common/redis_sentinel). It
 * blocks: each sentinel gets at most min(chat_outbox.redis_timeout, 1 s) to connect and answer, so a
 * signal waits at most that long per sentinel. A master that differs from the last one is logged once.
 */
static bool
SinkDiscoverMaster(SinkFailure *failure)
{
	char		error[CHAT_OUTBOX_ERRLEN] = "";
	char		found[sizeof sink.master] = "";
	bool		ok = false;

	chat_outbox::CallCpp([&] {
		std::string why;
		auto master = chat_outbox::DiscoverMaster(sink.url, std::min(chat_outbox_redis_timeout, 1000),
												  &sink.sentinel_cursor, &why);
		if (!master) {
			strlcpy(error, why.c_str(), sizeof error);
			return;
		}
		snprintf(found, sizeof found, "%s:%d", master->host.c_str(), master->port);
		sink.url = chat_outbox::AtMaster(sink.url, *master);
		ok = true;
	});
	if (!ok) {
		SinkFail(failure, "sentinel discovery", error);
		return false;
	}
	if (strcmp(found, sink.master) != 0) {
		ereport(LOG, (errmsg("chat_outbox relay: redis master \"%s\" is at %s%s%s", sink.url.master_name.c_str(), found,
							 sink.master[0] ? ", was " : "", sink.master)));
		strlcpy(sink.master, found, sizeof sink.master);
	}
	return true;
}

/* SinkReadHandshakeReply reads one reply of the handshake; an error reply fails the connection, named by `what`. */
static redisReply *
SinkReadHandshakeReply(const char *what, TimestampTz deadline, SinkFailure *failure)
{
	redisReply *r = SinkRead(deadline, failure);
	char		why[CHAT_OUTBOX_ERRLEN];

	if (!r || r->type != REDIS_REPLY_ERROR)
		return r;
	strlcpy(why, r->str, sizeof why);
	freeReplyObject(r);
	SinkFail(failure, what, why);
	return nullptr;
}

/*
 * SinkHandshake pipelines the shared handshake (HandshakeCommands: AUTH, SELECT), SCRIPT LOAD and
 * the three CONFIG GETs in one round trip.
 */
static bool
SinkHandshake(TimestampTz deadline, SinkFailure *failure)
{
	static const char *const config_names[3] = {"appendonly", "maxmemory-policy", "appendfsync"};
	char		config[3][64] = {"", "", ""};
	char		expected_sha[64] = "";
	redisReply *r;

	chat_outbox::CallCpp([&] {
		sink.handshake.clear();
		sink.handshake_commands = chat_outbox::HandshakeCommands(sink.url);
		if (sink.url.IsSentinel())
			sink.handshake_commands.push_back(chat_outbox::MasterCheckCommand());
		for (const auto &argv : sink.handshake_commands) {
			chat_outbox::RespCommand command(&sink.handshake, argv.size());
			for (const auto &arg : argv)
				command.Arg(arg);
		}
		EncodeScriptLoad(&sink.handshake);
		for (const char *name : config_names)
			chat_outbox::RespCommand(&sink.handshake, 3).Arg("CONFIG").Arg("GET").Arg(name);
		strlcpy(expected_sha, chat_outbox::ScriptSha1(chat_outbox::BatchAddScript()).c_str(), sizeof expected_sha);
	});
	if (!SinkAppend(sink.handshake, failure) || !SinkFlush(deadline, failure))
		return false;

	for (size_t i = 0; i < sink.handshake_commands.size(); i++) {
		bool		is_role = sink.url.IsSentinel() && i + 1 == sink.handshake_commands.size();
		bool		master = false;

		if (!(r = SinkReadHandshakeReply(sink.handshake_commands[i][0].c_str(), deadline, failure)))
			return false;
		if (is_role)
			master = r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING &&
				chat_outbox::RoleIsMaster(r->element[0]->str);
		freeReplyObject(r);
		if (is_role && !master) {
			/* a stale sentinel named a replica (or a demoted master): ask the next one */
			sink.sentinel_cursor++;
			SinkFail(failure, "ROLE", "the address the sentinel named is not the master (yet)");
			return false;
		}
	}
	if (!(r = SinkReadHandshakeReply("SCRIPT LOAD", deadline, failure)))
		return false;
	if (r->type == REDIS_REPLY_STRING && strcmp(r->str, expected_sha) != 0) {
		freeReplyObject(r);
		SinkFail(failure, "SCRIPT LOAD", "Redis named the script by another sha1 than its text's");
		return false;
	}
	if (r->type == REDIS_REPLY_STRING)
		strlcpy(sink.script_sha, r->str, sizeof sink.script_sha);
	freeReplyObject(r);
	/* a refused CONFIG GET (a managed Redis) leaves its setting unknown: not a failure */
	for (int i = 0; i < 3; i++) {
		if (!(r = SinkRead(deadline, failure)))
			return false;
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING)
			strlcpy(config[i], r->element[1]->str, sizeof config[i]);
		freeReplyObject(r);
	}
	chat_outbox::CallCpp([&] {
		std::string w = chat_outbox::RedisSafetyWarning(chat_outbox::RedisDurability{config[0], config[2], config[1]});
		strlcpy(sink.warning, w.c_str(), sizeof sink.warning);
		strlcpy(sink.appendfsync, config[2], sizeof sink.appendfsync);
	});
	return true;
}

bool
RedisSinkEnsureConnected(SinkFailure *failure)
{
	TimestampTz deadline;
	char		error[CHAT_OUTBOX_ERRLEN];
	int			soerr = 0;
	socklen_t	len = sizeof soerr;

	failure->kind = FAILURE_CONNECTION;
	failure->message[0] = '\0';
	if ((sink.state == SinkState::kIdle || sink.state == SinkState::kInFlight) && sink.connected_url &&
		strcmp(sink.connected_url, chat_outbox_redis_url) == 0)
		return true;
	RedisSinkDisconnect();

	if (!ParseTarget(chat_outbox_redis_url, error, sizeof error)) {
		SinkFail(failure, "invalid chat_outbox.redis_url", error);
		return false;
	}
	if (sink.url.IsSentinel() && !SinkDiscoverMaster(failure))
		return false;
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	sink.ctx = sink.url.unix_socket.empty() ? redisConnectNonBlock(sink.url.host.c_str(), sink.url.port)
											: redisConnectUnixNonBlock(sink.url.unix_socket.c_str());
	if (!sink.ctx) {
		SinkFail(failure, "connect", "out of memory");
		return false;
	}
	sink.state = SinkState::kConnecting;
	if (sink.ctx->err) {
		strlcpy(error, sink.ctx->errstr, sizeof error);
		SinkFail(failure, "connect", error);
		return false;
	}
	if (!SinkWait(WL_SOCKET_WRITEABLE, deadline, failure))
		return false;
	if (getsockopt(sink.ctx->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
		SinkFail(failure, "connect", strerror(soerr ? soerr : errno));
		return false;
	}
	if (!SinkHandshake(deadline, failure))
		return false;

	if (sink.connected_url)
		pfree(sink.connected_url);
	sink.connected_url = nullptr;
	sink.connected_url = MemoryContextStrdup(TopMemoryContext, chat_outbox_redis_url);
	sink.state = SinkState::kIdle;
	return true;
}

/* EncodeBatch chooses the job ids and builds the EVALSHA (or EVAL) request in sink.request. */
static void
EncodeBatch(const char *service, const char *queue, const OutboxRow *rows, int n)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		now_ms = now / 1000 + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	const char *prefix = chat_outbox_bullmq_prefix;

	chat_outbox::CallCpp([&] {
		sink.request.clear();
		sink.job_ids.clear();
		sink.jobs.clear();
		sink.row_ids.clear();
		sink.job_ids.reserve(n);
		for (int i = 0; i < n; i++)
			sink.row_ids.push_back(rows[i].id);
		for (int i = 0; i < n; i++)
			sink.job_ids.push_back(chat_outbox::ChooseJobId(rows[i].payload_id, service, rows[i].id));
		for (int i = 0; i < n; i++)
			sink.jobs.push_back({sink.job_ids[i], std::string_view(rows[i].event, rows[i].event_len),
								 std::string_view(rows[i].payload, rows[i].payload_len)});
		chat_outbox::EncodeBatchAdd(prefix, queue, sink.jobs.data(), n, now_ms, sink.script_sha, &sink.request);
	});
}

bool
RedisSinkSend(const char *service, const char *queue, const OutboxRow *rows, int n, SinkFailure *failure)
{
	TimestampTz deadline;

	failure->kind = FAILURE_CONNECTION;
	failure->message[0] = '\0';
	sink.timed_out = false;
	/* an ERROR between the last Send and its Await left a reply unread: the stream is out of step */
	if (sink.state == SinkState::kInFlight)
		RedisSinkDisconnect();
	sink.may_resend = sink.state == SinkState::kIdle;
	if (!RedisSinkEnsureConnected(failure))
		return false;
	EncodeBatch(service, queue, rows, n);
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (SinkSendBatch(deadline, failure))
		return true;
	/* as in RedisSinkAwait: a connection found dead on reuse is not an outage */
	if (sink.may_resend && failure->kind != FAILURE_INTERRUPTED && !sink.timed_out &&
		sink.state == SinkState::kDisconnected) {
		sink.may_resend = false;
		if (RedisSinkEnsureConnected(failure) && SinkSendBatch(deadline, failure))
			return true;
	}
	return false;
}

/*
 * SinkReadBatchReply reads the batch's reply: 1 ok, 0 NOSCRIPT, -1 failed. Once the reply is read
 * whole the sink is kIdle again. An error reply (NOPERM, a queue key of the wrong type) is about this
 * batch only: the connection stays open for the other services, and nothing of the batch was written.
 */
static int
SinkReadBatchReply(int *created, List **refusals, SinkFailure *failure)
{
	redisReply *r = SinkRead(sink.deadline, failure);
	size_t		n = sink.row_ids.size();

	if (!r)
		return -1;
	sink.state = SinkState::kIdle;
	if (r->type == REDIS_REPLY_ERROR && chat_outbox::IsNoScriptError(std::string_view(r->str, r->len))) {
		freeReplyObject(r);
		return 0;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		failure->kind = FAILURE_SERVICE;
		snprintf(failure->message, sizeof failure->message, "batch add: %s", r->str);
		freeReplyObject(r);
		return -1;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != n) {
		freeReplyObject(r);
		SinkFail(failure, "batch add", "unexpected reply");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		redisReply *e = r->element[i];

		if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
			(*created)++;
		else if (e->type == REDIS_REPLY_STRING) {
			SinkRefusal *refusal = (SinkRefusal *) palloc(sizeof(SinkRefusal));

			refusal->row_id = sink.row_ids[i];
			strlcpy(refusal->reason, e->str, sizeof refusal->reason);
			*refusals = lappend(*refusals, refusal);
		}
	}
	freeReplyObject(r);
	return 1;
}

/* SinkReloadScript loads the script again (a Redis restart or SCRIPT FLUSH dropped it) and re-sends the batch. */
static bool
SinkReloadScript(SinkFailure *failure)
{
	redisReply *r;

	chat_outbox::CallCpp([&] {
		sink.handshake.clear();
		EncodeScriptLoad(&sink.handshake);
	});
	if (!SinkAppend(sink.handshake, failure) || !SinkSendBatch(sink.deadline, failure))
		return false;
	r = SinkRead(sink.deadline, failure);
	if (!r)
		return false;
	if (r->type != REDIS_REPLY_STRING) {
		freeReplyObject(r);
		SinkFail(failure, "SCRIPT LOAD", "unexpected reply");
		return false;
	}
	freeReplyObject(r);
	return true;
}

/*
 * RedisSinkAwait waits for the reply to the batch RedisSinkSend sent. A connection that sat idle
 * may have been closed by a Redis restart or CLIENT KILL since the last batch; that is not an
 * outage, so a batch that fails on a reused connection for any reason but a timeout is sent once
 * more on a new one. Sending twice is safe: the second add of an id is a BullMQ duplicate.
 */
bool
RedisSinkAwait(int *created, List **refusals, SinkFailure *failure)
{
	bool		reloaded = false;

	*created = 0;
	sink.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (sink.state != SinkState::kInFlight) {
		SinkFail(failure, "batch add", "no batch in flight");
		return false;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		int			rc = SinkReadBatchReply(created, refusals, failure);

		if (rc == 1) {
			/* logged only once the batch went through: a reload that fails is an outage, logged as one */
			if (reloaded)
				ereport(LOG, (errmsg("chat_outbox relay: redis had lost the batch-add script; loaded it again"),
							  errdetail("SCRIPT FLUSH, or a restart or failover behind a proxy that kept the connection "
										"open. The batch Redis refused with NOSCRIPT went again.")));
			return true;
		}
		if (rc == 0 && attempt < 2) {
			if (!SinkReloadScript(failure))
				break;
			reloaded = true;
			continue;
		}
		if (rc == 0) {
			SinkFail(failure, "batch add", "script missing after SCRIPT LOAD");
			break;
		}
		if (failure->kind == FAILURE_SERVICE)
			break;
		if (!sink.may_resend || failure->kind == FAILURE_INTERRUPTED || sink.timed_out ||
			sink.state != SinkState::kDisconnected)
			break;
		/* the idle connection was dead: once more on a new one (its handshake loads the script) */
		sink.may_resend = false;
		if (!RedisSinkEnsureConnected(failure) || !SinkSendBatch(sink.deadline, failure))
			break;
	}
	/* out of attempts with the last sending's reply unread: never leave kInFlight behind */
	if (sink.state == SinkState::kInFlight)
		RedisSinkDisconnect();
	return false;
}

bool
RedisSinkWaitReplicas(int replicas, SinkFailure *failure)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	int			wait_ms = Max(chat_outbox_redis_timeout / 2, 1); /* never 0: WAIT 0 blocks for ever */
	redisReply *r;
	long long	acks;
	char		why[CHAT_OUTBOX_ERRLEN];

	failure->kind = FAILURE_CONNECTION;
	failure->message[0] = '\0';
	if (sink.state != SinkState::kIdle) {
		SinkFail(failure, "WAIT", "the connection is not idle");
		return false;
	}
	chat_outbox::CallCpp([&] {
		sink.handshake.clear();
		chat_outbox::RespCommand(&sink.handshake, 3).Arg("WAIT").Arg(std::to_string(replicas)).Arg(std::to_string(wait_ms));
	});
	if (!SinkAppend(sink.handshake, failure) || !SinkFlush(deadline, failure))
		return false;
	if (!(r = SinkRead(deadline, failure)))
		return false;
	if (r->type != REDIS_REPLY_INTEGER) {
		strlcpy(why, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply", sizeof why);
		freeReplyObject(r);
		SinkFail(failure, "WAIT", why);
		return false;
	}
	acks = r->integer;
	freeReplyObject(r);
	if (acks < replicas) {
		snprintf(why, sizeof why, "%lld of %d replicas acknowledged the pass within %d ms (chat_outbox.redis_min_replicas)",
				 acks, replicas, wait_ms);
		SinkFail(failure, "WAIT", why);
		return false;
	}
	return true;
}
