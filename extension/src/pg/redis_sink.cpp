/*
 * extension/src/pg/redis_sink.cpp - write BullMQ batches to Redis without ever blocking.
 *
 * hiredis runs in non-blocking mode and every wait is a WaitLatchOrSocket on its socket, so a
 * SIGTERM or SIGHUP (which set the latch) is answered at once even while Redis hangs, and the
 * wait never outlives chat_outbox.redis_timeout. Nothing is buffered here between calls: a
 * failure drops the connection and the caller rolls back, so the rows stay in the outbox.
 *
 * This file is C-style on purpose. Postgres may longjmp out of any wait (WL_EXIT_ON_PM_DEATH,
 * ereport), so no frame here owns a C++ object; core C++ runs only inside CallCpp, and the
 * request bytes live in file-level statics.
 */
#include "pg/redis_sink.hpp"

#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "core/bullmq_batch_add.hpp"
#include "core/job_id.hpp"
#include "core/relay_health.hpp"
#include "redis_safety.hpp"
#include "core/resp.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"
#include "redis_url.hpp"

bool		redis_sink_latch_seen = false;

static redisContext *sink_ctx = nullptr;
static char *sink_connected_url = nullptr; /* TopMemoryContext copy of the URL in use */
static char sink_sha[64];
static char sink_warning[CHAT_OUTBOX_ERRLEN];
static char sink_appendfsync[32];
static bool sink_timed_out = false;	/* the last failure was a timeout, not a closed connection */

/* Statics, not locals: they must survive a longjmp through this file without a destructor. */
static std::string sink_request;
static std::string sink_handshake;
static std::vector<std::string> sink_job_ids;
static std::vector<chat_outbox::JobSpec> sink_jobs;
static std::vector<int64_t> sink_row_ids; /* outbox ids of the batch in flight, in job order */

typedef struct SinkTarget
{
	bool		ok;
	char		error[CHAT_OUTBOX_ERRLEN];
	char		host[256];
	int			port;
	char		unix_socket[256];
	char		user[256];
	char		password[256];
	int			db;
	char		redacted[CHAT_OUTBOX_ERRLEN];
} SinkTarget;

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
	if (sink_ctx)
		redisFree(sink_ctx);
	sink_ctx = nullptr;
}

const char *
RedisSinkWarning(void)
{
	return sink_warning;
}

const char *
RedisSinkAppendfsync(void)
{
	return sink_appendfsync;
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
			sink_timed_out = true;
			return false;
		}
		rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events, sink_ctx->fd,
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
		if (redisBufferWrite(sink_ctx, &done) == REDIS_ERR) {
			SinkFail(failure, "write", sink_ctx->errstr);
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

		if (redisGetReplyFromReader(sink_ctx, &reply) == REDIS_ERR) {
			SinkFail(failure, "protocol", sink_ctx->errstr);
			return nullptr;
		}
		if (reply)
			return (redisReply *) reply;
		if (!SinkWait(WL_SOCKET_READABLE, deadline, failure))
			return nullptr;
		if (redisBufferRead(sink_ctx) == REDIS_ERR) {
			SinkFail(failure, "read", sink_ctx->errstr[0] ? sink_ctx->errstr : "connection closed");
			return nullptr;
		}
	}
}

/* SinkAppend queues already-encoded commands on the connection; SinkFlush sends them. */
static bool
SinkAppend(const std::string &commands, SinkFailure *failure)
{
	if (redisAppendFormattedCommand(sink_ctx, commands.data(), commands.size()) != REDIS_OK) {
		SinkFail(failure, "write", "out of memory");
		return false;
	}
	return true;
}

/* SinkSend sends the batch encoded in sink_request. */
static bool
SinkSend(TimestampTz deadline, SinkFailure *failure)
{
	return SinkAppend(sink_request, failure) && SinkFlush(deadline, failure);
}

/* EncodeScriptLoad appends SCRIPT LOAD of the batch-add script (C++ that may throw: call inside CallCpp). */
static void
EncodeScriptLoad(std::string *out)
{
	chat_outbox::RespCommand(out, 3).Arg("SCRIPT").Arg("LOAD").Arg(chat_outbox::BatchAddScript());
}

static void
ParseTarget(const char *url, SinkTarget *t)
{
	memset(t, 0, sizeof *t);
	chat_outbox::CallCpp([&] {
		std::string error;
		auto parsed = chat_outbox::ParseRedisUrl(url, &error);
		if (!parsed) {
			strlcpy(t->error, error.c_str(), sizeof t->error);
			return;
		}
		t->ok = true;
		strlcpy(t->host, parsed->host.c_str(), sizeof t->host);
		t->port = parsed->port;
		strlcpy(t->unix_socket, parsed->unix_socket.c_str(), sizeof t->unix_socket);
		strlcpy(t->user, parsed->username.c_str(), sizeof t->user);
		strlcpy(t->password, parsed->password.c_str(), sizeof t->password);
		t->db = parsed->db;
		strlcpy(t->redacted, parsed->Redacted().c_str(), sizeof t->redacted);
	});
}

/* SinkHandshake pipelines AUTH, SELECT, SCRIPT LOAD and the three CONFIG GETs in one round trip. */
static bool
SinkHandshake(const SinkTarget *t, TimestampTz deadline, SinkFailure *failure)
{
	bool		auth = t->password[0] != '\0';
	bool		select = t->db != 0;
	char		config[3][64] = {"", "", ""}; /* appendonly, maxmemory-policy, appendfsync */

	sink_handshake.clear();
	chat_outbox::CallCpp([&] {
		using chat_outbox::RespCommand;
		if (auth && t->user[0])
			RespCommand(&sink_handshake, 3).Arg("AUTH").Arg(t->user).Arg(t->password);
		else if (auth)
			RespCommand(&sink_handshake, 2).Arg("AUTH").Arg(t->password);
		if (select)
			RespCommand(&sink_handshake, 2).Arg("SELECT").Arg(static_cast<long long>(t->db));
		EncodeScriptLoad(&sink_handshake);
		RespCommand(&sink_handshake, 3).Arg("CONFIG").Arg("GET").Arg("appendonly");
		RespCommand(&sink_handshake, 3).Arg("CONFIG").Arg("GET").Arg("maxmemory-policy");
		RespCommand(&sink_handshake, 3).Arg("CONFIG").Arg("GET").Arg("appendfsync");
	});
	if (!SinkAppend(sink_handshake, failure) || !SinkFlush(deadline, failure))
		return false;

	/* step codes, in the order the replies come back: 0 AUTH, 1 SELECT, 2 SCRIPT LOAD, 3-5 CONFIG GET */
	int			steps[6];
	int			nsteps = 0;

	if (auth)
		steps[nsteps++] = 0;
	if (select)
		steps[nsteps++] = 1;
	steps[nsteps++] = 2;
	steps[nsteps++] = 3;
	steps[nsteps++] = 4;
	steps[nsteps++] = 5;
	for (int i = 0; i < nsteps; i++) {
		redisReply *r = SinkRead(deadline, failure);
		int			step = steps[i];

		if (!r)
			return false;
		if (step <= 2 && r->type == REDIS_REPLY_ERROR) {
			static const char *what[] = {"AUTH", "SELECT", "SCRIPT LOAD"};
			char		why[CHAT_OUTBOX_ERRLEN];

			strlcpy(why, r->str, sizeof why);
			freeReplyObject(r);
			SinkFail(failure, what[step], why);
			return false;
		}
		if (step == 2 && r->type == REDIS_REPLY_STRING)
			strlcpy(sink_sha, r->str, sizeof sink_sha);
		if (step >= 3 && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
			r->element[1]->type == REDIS_REPLY_STRING)
			strlcpy(config[step - 3], r->element[1]->str, sizeof config[0]);
		freeReplyObject(r);
	}
	chat_outbox::CallCpp([&] {
		std::string w = chat_outbox::RedisSafetyWarning(chat_outbox::RedisDurability{config[0], config[2], config[1]});
		strlcpy(sink_warning, w.c_str(), sizeof sink_warning);
		strlcpy(sink_appendfsync, config[2], sizeof sink_appendfsync);
	});
	return true;
}

bool
RedisSinkEnsureConnected(SinkFailure *failure)
{
	SinkTarget	target;
	TimestampTz deadline;
	int			soerr = 0;
	socklen_t	len = sizeof soerr;

	failure->kind = FAILURE_CONNECTION;
	failure->message[0] = '\0';
	if (sink_ctx && sink_connected_url && strcmp(sink_connected_url, chat_outbox_redis_url) == 0)
		return true;
	RedisSinkDisconnect();

	ParseTarget(chat_outbox_redis_url, &target);
	if (!target.ok) {
		SinkFail(failure, "invalid chat_outbox.redis_url", target.error);
		return false;
	}
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	sink_ctx = target.unix_socket[0] ? redisConnectUnixNonBlock(target.unix_socket)
									 : redisConnectNonBlock(target.host, target.port);
	if (!sink_ctx) {
		SinkFail(failure, "connect", "out of memory");
		return false;
	}
	if (sink_ctx->err) {
		char		why[CHAT_OUTBOX_ERRLEN];

		strlcpy(why, sink_ctx->errstr, sizeof why);
		SinkFail(failure, "connect", why);
		return false;
	}
	if (!SinkWait(WL_SOCKET_WRITEABLE, deadline, failure))
		return false;
	if (getsockopt(sink_ctx->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
		SinkFail(failure, "connect", strerror(soerr ? soerr : errno));
		return false;
	}
	if (!SinkHandshake(&target, deadline, failure))
		return false;

	if (sink_connected_url)
		pfree(sink_connected_url);
	sink_connected_url = MemoryContextStrdup(TopMemoryContext, chat_outbox_redis_url);
	return true;
}

/* EncodeBatch chooses the job ids and builds the EVALSHA (or EVAL) request in sink_request. */
static void
EncodeBatch(const char *service, const char *queue, const OutboxRow *rows, int n, bool with_sha)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		now_ms = now / 1000 + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	const char *prefix = chat_outbox_bullmq_prefix;

	chat_outbox::CallCpp([&] {
		sink_request.clear();
		sink_job_ids.clear();
		sink_jobs.clear();
		sink_row_ids.clear();
		sink_job_ids.reserve(n);
		for (int i = 0; i < n; i++)
			sink_row_ids.push_back(rows[i].id);
		for (int i = 0; i < n; i++)
			sink_job_ids.push_back(chat_outbox::ChooseJobId(rows[i].payload_id, service, rows[i].id));
		for (int i = 0; i < n; i++)
			sink_jobs.push_back({sink_job_ids[i], std::string_view(rows[i].event, rows[i].event_len),
								 std::string_view(rows[i].payload, rows[i].payload_len)});
		chat_outbox::EncodeBatchAdd(prefix, queue, sink_jobs.data(), n, now_ms, with_sha ? sink_sha : "",
									&sink_request);
	});
}

/*
 * The batch in flight. Its request bytes stay in sink_request until its reply is in, so it can be
 * sent again (after a NOSCRIPT, or on a new connection) without the rows, which the caller may
 * free as soon as RedisSinkSend returns.
 */
static int	sink_pending_n = -1;
static bool sink_pending_reused = false;	/* sent on a connection that existed before the batch */
/* set when the wait starts: the time Postgres spent between Send and Await is not Redis' */
static TimestampTz sink_pending_deadline = 0;

bool
RedisSinkSend(const char *service, const char *queue, const OutboxRow *rows, int n, SinkFailure *failure)
{
	TimestampTz deadline;

	failure->kind = FAILURE_CONNECTION;
	failure->message[0] = '\0';
	sink_timed_out = false;
	/* an error between the last Send and its Await left a reply unread: the stream is out of step */
	if (sink_pending_n >= 0)
		RedisSinkDisconnect();
	sink_pending_n = -1;
	sink_pending_reused = sink_ctx != nullptr;
	if (!RedisSinkEnsureConnected(failure))
		return false;
	EncodeBatch(service, queue, rows, n, sink_sha[0] != '\0');
	sink_pending_n = n;
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (SinkSend(deadline, failure))
		return true;
	/* as in RedisSinkAwait: a connection found dead on reuse is not an outage */
	if (sink_pending_reused && failure->kind != FAILURE_INTERRUPTED && !sink_timed_out && sink_ctx == nullptr) {
		sink_pending_reused = false;
		if (RedisSinkEnsureConnected(failure) && SinkSend(deadline, failure))
			return true;
	}
	sink_pending_n = -1;
	return false;
}

/*
 * SinkReadBatchReply reads the pending batch's reply: 1 ok, 0 NOSCRIPT, -1 failed. An error reply
 * (NOPERM, a queue key of the wrong type) is about this batch only: the reply was read whole, so
 * the connection stays open for the other services, and nothing of the batch was written.
 */
static int
SinkReadBatchReply(int *created, List **refusals, SinkFailure *failure)
{
	redisReply *r;
	int			n = sink_pending_n;

	if (!sink_ctx) {
		SinkFail(failure, "read", "connection closed");
		return -1;
	}
	r = SinkRead(sink_pending_deadline, failure);
	if (!r)
		return -1;
	if (r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(r);
		return 0;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		failure->kind = FAILURE_SERVICE;
		snprintf(failure->message, sizeof failure->message, "batch add: %s", r->str);
		freeReplyObject(r);
		return -1;
	}
	if (r->type != REDIS_REPLY_ARRAY || (int) r->elements != n) {
		freeReplyObject(r);
		SinkFail(failure, "batch add", "unexpected reply");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		redisReply *e = r->element[i];

		if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
			(*created)++;
		else if (e->type == REDIS_REPLY_STRING && i < (int) sink_row_ids.size()) {
			SinkRefusal *refusal = (SinkRefusal *) palloc(sizeof(SinkRefusal));

			refusal->row_id = sink_row_ids[i];
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
	std::string *script_load = &sink_handshake;
	redisReply *r;

	script_load->clear();
	chat_outbox::CallCpp([&] { EncodeScriptLoad(script_load); });
	if (!SinkAppend(*script_load, failure) || !SinkSend(sink_pending_deadline, failure))
		return false;
	r = SinkRead(sink_pending_deadline, failure);
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
	sink_pending_deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (sink_pending_n < 0) {
		SinkFail(failure, "batch add", "no batch in flight");
		return false;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		int			rc = SinkReadBatchReply(created, refusals, failure);

		if (rc == 1) {
			sink_pending_n = -1;
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
		if (!sink_pending_reused || failure->kind == FAILURE_INTERRUPTED || sink_timed_out || sink_ctx != nullptr)
			break;
		/* the idle connection was dead: once more on a new one (its handshake loads the script) */
		sink_pending_reused = false;
		if (!RedisSinkEnsureConnected(failure) || !SinkSend(sink_pending_deadline, failure))
			break;
	}
	sink_pending_n = -1;
	return false;
}
