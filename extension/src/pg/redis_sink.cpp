/*
 * extension/src/pg/redis_sink.cpp - write BullMQ batches to Redis without ever blocking.
 *
 * hiredis runs in non-blocking mode, its bytes moved by common/redis_transport (plaintext, or TLS for
 * a rediss:// shard), and every wait is a WaitLatchOrSocket on its socket, so a
 * SIGTERM or SIGHUP (which set the latch) is answered at once even while Redis hangs, and the
 * wait never outlives chat_outbox.redis_timeout; only Sentinel discovery, before a connect, asks
 * the sentinels over blocking connections (see DiscoverMaster). Nothing is buffered here between calls: a
 * failure drops the connection and the caller rolls back, so the rows stay in the outbox.
 *
 * That is the shard list's table of operations (sink_ops.hpp); this file also parses
 * chat_outbox.redis_url, chooses the table from it (a redis-cluster:// URL: cluster_sink.cpp's) and
 * holds the public RedisSink functions, which forward to the table in use.
 *
 * This file is C-style on purpose. Postgres may longjmp out of any wait (WL_EXIT_ON_PM_DEATH,
 * ereport), so no frame here owns a C++ object; core C++ runs only inside CallCpp, and every C++
 * object (the request bytes, the parsed URL) lives in the static RedisSinks below, one per shard.
 */
#include "pg/redis_sink.hpp"
#include "pg/sink_ops.hpp"

#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "common/backoff.hpp"
#include "common/relay/bullmq_batch_add.hpp"
#include "common/relay/job_id.hpp"
#include "common/relay/partition_layout.hpp"
#include "common/partitions.hpp"
#include "common/redis_safety.hpp"
#include "common/relay/resp.hpp"
#include "common/relay/shard_outage.hpp"
#include "pg/cpp_boundary.hpp"
#include "pg/guc.hpp"
#include "common/redis_handshake.hpp"
#include "common/redis_script.hpp"
#include "common/redis_sentinel.hpp"
#include "common/redis_transport.hpp"
#include "common/redis_url.hpp"
#include "common/tls_session.hpp"

bool redis_sink_latch_seen = false;

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
	SinkState				 state = SinkState::kDisconnected;
	redisContext			*ctx = nullptr;
	chat_outbox::TlsSession *tls = nullptr;							 /* a rediss:// shard's session on ctx's socket (NULL: plaintext) */
	chat_outbox::IoWait		 read_wait = chat_outbox::IoWait::kRead; /* what the next read waits for */
	int						 index = 0;								 /* its shard number in chat_outbox.redis_url */

	/* the connection's target and what its handshake learned */
	chat_outbox::RedisUrl				  url;				   /* this shard's element of chat_outbox.redis_url */
	char								  script_sha[64] = ""; /* the batch-add script's sha ("": send the text with EVAL) */
	char								  warning[CHAT_OUTBOX_ERRLEN] = "";
	char								  appendfsync[32] = "";
	std::vector<std::vector<std::string>> handshake_commands; /* HandshakeCommands(url) */
	std::string							  handshake;		  /* the handshake's (or a reload's SCRIPT LOAD) request bytes */
	std::string							  query;			  /* SinkQuery's command, kept for a second sending over a new connection's handshake */

	/* the batch of the last RedisSinkSend: one Lua call per partition of the batch on this shard */
	std::string			 request;
	std::vector<int64_t> row_ids;			   /* in request order */
	std::vector<size_t>	 call_rows;			   /* rows of each call, in request order */
	bool				 may_resend = false;   /* sent on a connection that existed before the batch: once more
												* on a new one if that connection turns out dead */
	TimestampTz deadline = 0;				   /* set when the wait starts: the time Postgres spent between Send and
												* Await is not Redis' */
	std::vector<std::string>		  job_ids; /* encoding scratch: jobs points into job_ids */
	std::vector<chat_outbox::JobSpec> jobs;

	bool timed_out = false; /* the last failure was a timeout, not a closed connection */

	/* a shard other than shard 0 that failed: its outage (RedisSinkShardUp), on RelayNowMs's clock */
	chat_outbox::ShardOutage outage;

	/* a redis-sentinel:// shard only: where its discovery starts, and the master it last found (for the log) */
	size_t sentinel_cursor = 0;
	char   master[300] = "";
};

/*
 * One sink per shard of chat_outbox.redis_url (a whitespace-separated list, common/partitions.hpp),
 * each with its own connection and state machine as above. shards_guc is the TopMemoryContext
 * copy of the setting the list was parsed from: a reload that changes it drops every connection.
 */
static RedisSink sinks[CHAT_OUTBOX_MAX_SHARDS];
static int64	 shard_connects = 0; /* connections made, every shard (RedisSinkConnects) */
static int		 nshards = 0;
static char		*shards_guc = nullptr;

/*
 * The operations in use (sink_ops.hpp): these shards', or a Redis Cluster's (cluster_sink.cpp, when
 * chat_outbox.redis_url is a redis-cluster:// URL: then sinks[0].url is that URL and nshards is 1).
 */
extern const SinkOps  shard_ops;
static const SinkOps *ops = &shard_ops;
static bool			  cluster_mode = false;

static void SinkDisconnect(RedisSink &sink);

/* SinkShardDown starts or extends a shard's backoff (common/relay/shard_outage.hpp: logged when it starts). */
static void
SinkShardDown(RedisSink &sink, const char *why)
{
	if (sink.outage.Failed(RelayNowMs()))
		ereport(LOG, (errmsg("chat_outbox relay: redis shard %d unreachable: %s", sink.index, why),
					  errdetail("Rows of the partitions on this shard stay in the outbox; the other shards' partitions "
								"are relayed. Retrying with backoff up to %d s.",
								(int) (chat_outbox::kServerRetryMaxMs / 1000))));
}

/* SinkShardBack ends a shard's outage once it is connected again (logged once). */
static void
SinkShardBack(RedisSink &sink)
{
	if (sink.outage.Back())
		ereport(LOG, (errmsg("chat_outbox relay: redis shard %d back", sink.index)));
}

bool
RedisSinkShardUp(int shard)
{
	return sinks[shard].outage.Due(RelayNowMs());
}

static void
SinkFail(RedisSink &sink, SinkFailure *failure, const char *what, const char *why)
{
	failure->kind = FAILURE_CONNECTION;
	failure->shard = sink.index;
	if (nshards > 1)
		snprintf(failure->message, sizeof failure->message, "shard %d: %s: %s", sink.index, what, why);
	else
		snprintf(failure->message, sizeof failure->message, "%s: %s", what, why);
	SinkDisconnect(sink);
	if (sink.index > 0)
		SinkShardDown(sink, failure->message);
}

static void
SinkDisconnect(RedisSink &sink)
{
	delete sink.tls; /* before the context: the session does not own the socket */
	sink.tls = nullptr;
	sink.read_wait = chat_outbox::IoWait::kRead;
	if (sink.ctx)
		redisFree(sink.ctx);
	sink.ctx = nullptr;
	sink.state = SinkState::kDisconnected;
}

static void
ShardsDisconnect(void)
{
	for (int i = 0; i < CHAT_OUTBOX_MAX_SHARDS; i++)
		SinkDisconnect(sinks[i]);
}

int
RedisSinkShards(void)
{
	return nshards;
}

/* the first shard's durability warning, named by its shard when there are several */
static const char *
ShardsWarning(void)
{
	static char warning[CHAT_OUTBOX_ERRLEN];

	for (int i = 0; i < nshards; i++)
		if (sinks[i].warning[0]) {
			if (nshards == 1)
				return sinks[i].warning;
			snprintf(warning, sizeof warning, "shard %d: %s", i, sinks[i].warning);
			return warning;
		}
	return "";
}

static const char *
ShardsAppendfsync(void)
{
	return nshards > 0 ? sinks[0].appendfsync : "";
}

/*
 * A terminate or cancel request stops a wait for Redis at once. The worker's configuration reload
 * (SIGHUP: relay_enabled = off, or any pg_reload_conf()) lets the batch in flight finish when Redis
 * answers within RELOAD_GRACE_MS of it: stopping at once rolls back a pass whose jobs Redis may have
 * taken, and its rows go again (BullMQ counts them duplicates). A Redis that does not answer in that
 * time (hung) still lets the reload through within it.
 */
#define RELOAD_GRACE_MS 2000

static TimestampTz reload_seen_at = 0; /* when a wait first saw the pending reload; 0: none pending */

/* SinkStopAt: when the wait must stop for a signal (now: at once), or 0 when none asks it to. */
static TimestampTz
SinkStopAt(TimestampTz now)
{
	if (ProcDiePending || QueryCancelPending)
		return now;
	if (!(InBackgroundWorker() && ConfigReloadPending)) {
		reload_seen_at = 0;
		return 0;
	}
	if (reload_seen_at == 0)
		reload_seen_at = now;
	return TimestampTzPlusMilliseconds(reload_seen_at, RELOAD_GRACE_MS);
}

/* SinkWait waits for `events` on the Redis socket until `deadline`; false on timeout or signal. */
static bool
SinkWait(RedisSink &sink, int events, TimestampTz deadline, SinkFailure *failure)
{
	for (;;) {
		TimestampTz now = GetCurrentTimestamp();
		TimestampTz stop_at = SinkStopAt(now);
		long		timeout_ms = TimestampDifferenceMilliseconds(now, deadline);
		int			rc;

		if (stop_at != 0 && stop_at <= now) {
			SinkDisconnect(sink); /* the reply stream is now out of step */
			failure->kind = FAILURE_INTERRUPTED;
			strlcpy(failure->message, "interrupted", sizeof failure->message);
			return false;
		}
		if (timeout_ms <= 0) {
			SinkFail(sink, failure, "timeout", "no answer within chat_outbox.redis_timeout");
			sink.timed_out = true;
			return false;
		}
		if (stop_at != 0)
			timeout_ms = Min(timeout_ms, Max(1, TimestampDifferenceMilliseconds(now, stop_at)));
		rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events, sink.ctx->fd,
							   timeout_ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET) {
			ResetLatch(MyLatch);
			redis_sink_latch_seen = true;
		}
		if (rc & events)
			return true;
	}
}

/* SocketEvent: the WaitLatchOrSocket event of a transport's wait (common/redis_transport.hpp) */
static int
SocketEvent(chat_outbox::IoWait wait)
{
	return wait == chat_outbox::IoWait::kWrite ? WL_SOCKET_WRITEABLE : WL_SOCKET_READABLE;
}

/* The transport's calls, made inside CallCpp (they allocate); a failure sets ctx->errstr. */
static int
SinkTransportWrite(RedisSink &sink, int *done, chat_outbox::IoWait *wait)
{
	int rc = REDIS_ERR;

	chat_outbox::CallCpp([&] { rc = chat_outbox::TransportWrite(sink.ctx, sink.tls, done, wait); });
	return rc;
}

static int
SinkTransportRead(RedisSink &sink)
{
	int rc = REDIS_ERR;

	chat_outbox::CallCpp([&] { rc = chat_outbox::TransportRead(sink.ctx, sink.tls, &sink.read_wait); });
	return rc;
}

static bool
SinkFlush(RedisSink &sink, TimestampTz deadline, SinkFailure *failure)
{
	int					done = 0;
	chat_outbox::IoWait wait = chat_outbox::IoWait::kWrite;

	for (;;) {
		if (SinkTransportWrite(sink, &done, &wait) == REDIS_ERR) {
			SinkFail(sink, failure, "write", sink.ctx->errstr);
			return false;
		}
		if (done)
			return true;
		if (!SinkWait(sink, SocketEvent(wait), deadline, failure))
			return false;
	}
}

/* SinkRead returns the next reply (caller frees it), or NULL after a failure. */
static redisReply *
SinkRead(RedisSink &sink, TimestampTz deadline, SinkFailure *failure)
{
	for (;;) {
		void *reply = nullptr;

		if (redisGetReplyFromReader(sink.ctx, &reply) == REDIS_ERR) {
			SinkFail(sink, failure, "protocol", sink.ctx->errstr);
			return nullptr;
		}
		if (reply)
			return (redisReply *) reply;
		if (!SinkWait(sink, SocketEvent(sink.read_wait), deadline, failure))
			return nullptr;
		if (SinkTransportRead(sink) == REDIS_ERR) {
			SinkFail(sink, failure, "read", sink.ctx->errstr[0] ? sink.ctx->errstr : "connection closed");
			return nullptr;
		}
	}
}

/* SinkAppend queues already-encoded commands on the connection; SinkFlush sends them. */
static bool
SinkAppend(RedisSink &sink, const std::string &commands, SinkFailure *failure)
{
	if (redisAppendFormattedCommand(sink.ctx, commands.data(), commands.size()) != REDIS_OK) {
		SinkFail(sink, failure, "write", "out of memory");
		return false;
	}
	return true;
}

/* SinkSendBatch writes the batch in sink.request: from kIdle to kInFlight (kDisconnected on failure). */
static bool
SinkSendBatch(RedisSink &sink, TimestampTz deadline, SinkFailure *failure)
{
	sink.state = SinkState::kInFlight;
	return SinkAppend(sink, sink.request, failure) && SinkFlush(sink, deadline, failure);
}

/* EncodeScriptLoad appends SCRIPT LOAD of the batch-add script (C++ that may throw: call inside CallCpp). */
static void
EncodeScriptLoad(std::string *out)
{
	chat_outbox::RespCommand(out, 3).Arg("SCRIPT").Arg("LOAD").Arg(chat_outbox::BatchAddScript());
}

/*
 * ParseShards parses chat_outbox.redis_url into the sinks' urls when it changed since the last
 * parse (dropping every connection); false with *error set when it is malformed.
 */
static bool
ParseShards(char *error, size_t error_size)
{
	bool ok = false;
	bool insecure = false;

	if (shards_guc && strcmp(shards_guc, chat_outbox_redis_url) == 0)
		return nshards > 0;
	RedisSinkDisconnect();
	nshards = 0;
	cluster_mode = false;
	chat_outbox::CallCpp([&] {
		std::string why;
		auto		parsed = chat_outbox::ParseShardList(chat_outbox_redis_url, &why);
		if (parsed && parsed->size() > CHAT_OUTBOX_MAX_SHARDS)
			why = "more than " + std::to_string(CHAT_OUTBOX_MAX_SHARDS) + " Redis URLs";
		if (!why.empty()) {
			strlcpy(error, why.c_str(), error_size);
			return;
		}
		for (size_t i = 0; i < parsed->size(); i++) {
			sinks[i].url = (*parsed)[i];
			sinks[i].index = static_cast<int>(i);
			sinks[i].sentinel_cursor = 0;
			sinks[i].master[0] = '\0';
			insecure = insecure || sinks[i].url.tls.insecure;
		}
		nshards = static_cast<int>(parsed->size());
		/* the broker's kind, chosen here once per value of the setting (sink_ops.hpp) */
		cluster_mode = parsed->front().IsCluster();
		if (cluster_mode)
			ClusterSinkUse(parsed->front());
		ok = true;
	});
	ops = cluster_mode ? &cluster_sink_ops : &shard_ops;
	if (shards_guc)
		pfree(shards_guc);
	shards_guc = MemoryContextStrdup(TopMemoryContext, chat_outbox_redis_url);
	/* once per value of the setting: every connect of it skips the check */
	if (insecure)
		ereport(WARNING, (errmsg("chat_outbox relay: chat_outbox.redis_url says insecure=1: the Redis server's "
								 "certificate is not verified"),
						  errhint("Give the server's CA with cacert= instead.")));
	return ok;
}

/*
 * SinkDiscoverMaster points a sentinel shard's url at the master its sentinels name
 * (common/redis_sentinel). It blocks: each sentinel gets at most min(chat_outbox.redis_timeout, 1 s)
 * to connect and answer, so a signal waits at most that long per sentinel. A master that differs
 * from the shard's last one is logged once.
 */
static bool
SinkDiscoverMaster(RedisSink &sink, SinkFailure *failure)
{
	char error[CHAT_OUTBOX_ERRLEN] = "";
	char found[sizeof sink.master] = "";
	char name[CHAT_OUTBOX_ERRLEN] = "";
	char shard[32] = "";
	bool ok = false;

	chat_outbox::CallCpp([&] {
		std::string why;
		auto		master = chat_outbox::DiscoverMaster(sink.url, std::min(chat_outbox_redis_timeout, 1000),
														 &sink.sentinel_cursor, &why);
		if (!master) {
			strlcpy(error, why.c_str(), sizeof error);
			return;
		}
		snprintf(found, sizeof found, "%s:%d", master->host.c_str(), master->port);
		strlcpy(name, sink.url.master_name.c_str(), sizeof name);
		sink.url = chat_outbox::AtMaster(sink.url, *master);
		ok = true;
	});
	if (!ok) {
		SinkFail(sink, failure, "sentinel discovery", error);
		return false;
	}
	if (strcmp(found, sink.master) != 0) {
		if (nshards > 1)
			snprintf(shard, sizeof shard, " (shard %d)", sink.index);
		ereport(LOG, (errmsg("chat_outbox relay: redis master \"%s\"%s is at %s%s%s", name, shard, found,
							 sink.master[0] ? ", was " : "", sink.master)));
		strlcpy(sink.master, found, sizeof sink.master);
	}
	return true;
}

/* SinkReadHandshakeReply reads one reply of the handshake; an error reply fails the connection, named by `what`. */
static redisReply *
SinkReadHandshakeReply(RedisSink &sink, const char *what, TimestampTz deadline, SinkFailure *failure)
{
	redisReply *r = SinkRead(sink, deadline, failure);
	char		why[CHAT_OUTBOX_ERRLEN];

	if (!r || r->type != REDIS_REPLY_ERROR)
		return r;
	strlcpy(why, r->str, sizeof why);
	freeReplyObject(r);
	SinkFail(sink, failure, what, why);
	return nullptr;
}

/*
 * SinkHandshake pipelines the shared handshake (HandshakeCommands: AUTH, SELECT), SCRIPT LOAD and
 * the three CONFIG GETs in one round trip.
 */
static bool
SinkHandshake(RedisSink &sink, TimestampTz deadline, SinkFailure *failure)
{
	static const char *const config_names[3] = {"appendonly", "maxmemory-policy", "appendfsync"};
	char					 config[3][64] = {"", "", ""};
	char					 expected_sha[64] = "";
	redisReply				*r;

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
	if (!SinkAppend(sink, sink.handshake, failure) || !SinkFlush(sink, deadline, failure))
		return false;

	for (size_t i = 0; i < sink.handshake_commands.size(); i++) {
		bool is_role = sink.url.IsSentinel() && i + 1 == sink.handshake_commands.size();
		bool master = false;

		if (!(r = SinkReadHandshakeReply(sink, sink.handshake_commands[i][0].c_str(), deadline, failure)))
			return false;
		if (is_role)
			master = r->type == REDIS_REPLY_ARRAY && r->elements > 0 && r->element[0]->type == REDIS_REPLY_STRING &&
					 chat_outbox::RoleIsMaster(r->element[0]->str);
		freeReplyObject(r);
		if (is_role && !master) {
			/* a stale sentinel named a replica (or a demoted master): ask the next one */
			sink.sentinel_cursor++;
			SinkFail(sink, failure, "ROLE", "the address the sentinel named is not the master (yet)");
			return false;
		}
	}
	if (!(r = SinkReadHandshakeReply(sink, "SCRIPT LOAD", deadline, failure)))
		return false;
	if (r->type == REDIS_REPLY_STRING && strcmp(r->str, expected_sha) != 0) {
		freeReplyObject(r);
		SinkFail(sink, failure, "SCRIPT LOAD", "Redis named the script by another sha1 than its text's");
		return false;
	}
	if (r->type == REDIS_REPLY_STRING)
		strlcpy(sink.script_sha, r->str, sizeof sink.script_sha);
	freeReplyObject(r);
	/* a refused CONFIG GET (a managed Redis) leaves its setting unknown: not a failure */
	for (int i = 0; i < 3; i++) {
		if (!(r = SinkRead(sink, deadline, failure)))
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

/*
 * SinkTlsHandshake starts a rediss:// shard's TLS session on the connected socket and runs its
 * handshake, which verifies the server (common/tls_session.hpp); a failure is the connect's.
 */
static bool
SinkTlsHandshake(RedisSink &sink, TimestampTz deadline, SinkFailure *failure)
{
	char				error[CHAT_OUTBOX_ERRLEN] = "";
	chat_outbox::IoWait wait = chat_outbox::IoWait::kNone;
	int					rc = REDIS_ERR;

	sink.timed_out = false;
	chat_outbox::CallCpp([&] {
		std::string why;
		sink.tls = chat_outbox::TlsSession::Open(sink.url.tls, sink.url.host, sink.ctx->fd, &why).release();
		if (!sink.tls)
			strlcpy(error, why.c_str(), sizeof error);
	});
	if (!sink.tls) {
		SinkFail(sink, failure, "connect", error[0] ? error : "TLS: out of memory");
		return false;
	}
	for (;;) {
		chat_outbox::CallCpp([&] { rc = chat_outbox::TransportHandshake(sink.ctx, sink.tls, &wait); });
		if (rc == REDIS_ERR) {
			strlcpy(error, sink.ctx->errstr, sizeof error);
			SinkFail(sink, failure, "connect", error);
			return false;
		}
		if (wait == chat_outbox::IoWait::kNone)
			return true;
		if (!SinkWait(sink, SocketEvent(wait), deadline, failure)) {
			if (sink.timed_out)
				snprintf(failure->message, sizeof failure->message, "%sconnect: TLS handshake: no answer within "
																	"chat_outbox.redis_timeout %s",
						 nshards > 1 ? psprintf("shard %d: ", sink.index) : "", chat_outbox::kTlsSilentHint);
			return false;
		}
	}
}

/* SinkEnsureConnected connects one shard (kDisconnected -> kIdle); a connected one is left as it is. */
static bool
SinkEnsureConnected(RedisSink &sink, SinkFailure *failure)
{
	TimestampTz deadline;
	char		error[CHAT_OUTBOX_ERRLEN];
	int			soerr = 0;
	socklen_t	len = sizeof soerr;

	failure->kind = FAILURE_CONNECTION;
	failure->shard = 0;
	failure->message[0] = '\0';
	if (sink.state == SinkState::kIdle || sink.state == SinkState::kInFlight)
		return true;
	SinkDisconnect(sink);
	/* a sentinel shard asks its sentinels on every connect: that is how it follows a failover */
	if (sink.url.IsSentinel() && !SinkDiscoverMaster(sink, failure))
		return false;
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	sink.ctx = sink.url.unix_socket.empty() ? redisConnectNonBlock(sink.url.host.c_str(), sink.url.port)
											: redisConnectUnixNonBlock(sink.url.unix_socket.c_str());
	if (!sink.ctx) {
		SinkFail(sink, failure, "connect", "out of memory");
		return false;
	}
	sink.state = SinkState::kConnecting;
	if (sink.ctx->err) {
		strlcpy(error, sink.ctx->errstr, sizeof error);
		SinkFail(sink, failure, "connect", error);
		return false;
	}
	if (!SinkWait(sink, WL_SOCKET_WRITEABLE, deadline, failure))
		return false;
	if (getsockopt(sink.ctx->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
		SinkFail(sink, failure, "connect", strerror(soerr ? soerr : errno));
		return false;
	}
	if (sink.url.tls.enabled && !SinkTlsHandshake(sink, deadline, failure))
		return false;
	if (!SinkHandshake(sink, deadline, failure))
		return false;
	sink.state = SinkState::kIdle;
	SinkShardBack(sink);
	shard_connects++;
	return true;
}

/*
 * ShardsEnsureConnected connects every shard of chat_outbox.redis_url (after a reload that changed
 * it, to the new list). A pass needs all of them: a service's partitions span the shards.
 */
static bool
ShardsEnsureConnected(SinkFailure *failure)
{
	for (int i = 0; i < nshards; i++)
		if (RedisSinkShardUp(i) && !SinkEnsureConnected(sinks[i], failure) && i == 0)
			return false; /* a failed shard > 0 is down now (SinkFail): the round goes on without it */
	failure->message[0] = '\0';
	return true;
}

/*
 * EncodeBatch chooses the job ids and builds the request in sink.request: one EVALSHA (or EVAL)
 * per call, each adding its rows to its partition's queue (common/partitions.hpp, PartitionQueue)
 * when the layout key holds *layout (NULL or LAYOUT_KEY_UNKNOWN: no check).
 */
static void
EncodeBatch(RedisSink &sink, const char *service, const char *queue, int partitions, const LayoutKeyValue *layout,
			const SinkCall *calls, int ncalls, const OutboxRow *rows)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		now_ms = now / 1000 + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	const char *prefix = chat_outbox_bullmq_prefix;

	chat_outbox::CallCpp([&] {
		const std::string service_queue(queue);
		const auto		  check = SinkLayoutCheck(service_queue, layout);

		sink.request.clear();
		sink.row_ids.clear();
		sink.call_rows.clear();
		for (int c = 0; c < ncalls; c++) {
			const OutboxRow *r = rows + calls[c].first;
			int				 n = calls[c].n;

			for (int i = 0; i < n; i++)
				sink.row_ids.push_back(r[i].id);
			SinkJobs(r, n, service, &sink.job_ids, &sink.jobs);
			chat_outbox::EncodeBatchAdd(prefix, chat_outbox::PartitionQueue(queue, partitions, calls[c].partition), check,
										SinkMarkStep(calls[c]), sink.jobs.data(), n, now_ms, sink.script_sha,
										&sink.request);
			sink.call_rows.push_back(static_cast<size_t>(n));
		}
	});
}

/*
 * SinkResendOnce says whether a command that just failed on a shard goes once more on a new
 * connection, and spends that once (*may_resend, set when the command went out on a connection made
 * before it). A connection that sat idle may have been closed by a Redis restart or CLIENT KILL since
 * its last command: that is no outage. Not after a timeout (Redis is there but slow: a second wait
 * would double it), an interrupt, or an answer. Only for what is safe twice: a batch (the second add
 * of an id is a BullMQ duplicate), reads, the layout key's SET; never WAIT (QueryResend).
 */
static bool
SinkResendOnce(RedisSink &sink, bool *may_resend, const SinkFailure *failure)
{
	if (!*may_resend || failure->kind != FAILURE_CONNECTION || sink.timed_out || sink.state != SinkState::kDisconnected)
		return false;
	*may_resend = false;
	return true;
}

static bool
ShardsSend(int shard, const char *service, const char *queue, int partitions, const LayoutKeyValue *layout,
		   const SinkCall *calls, int ncalls, const OutboxRow *rows, SinkFailure *failure)
{
	RedisSink  &sink = sinks[shard];
	TimestampTz deadline;

	failure->kind = FAILURE_CONNECTION;
	failure->shard = 0;
	failure->message[0] = '\0';
	sink.timed_out = false;
	/* an ERROR between the last Send and its Await left a reply unread: the stream is out of step */
	if (sink.state == SinkState::kInFlight)
		SinkDisconnect(sink);
	sink.may_resend = sink.state == SinkState::kIdle;
	if (!SinkEnsureConnected(sink, failure))
		return false;
	EncodeBatch(sink, service, queue, partitions, layout, calls, ncalls, rows);
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (SinkSendBatch(sink, deadline, failure))
		return true;
	if (SinkResendOnce(sink, &sink.may_resend, failure))
		return SinkEnsureConnected(sink, failure) && SinkSendBatch(sink, deadline, failure);
	return false;
}

/*
 * SinkReadBatchReply reads the replies of the request's calls: 1 ok, 0 NOSCRIPT, -1 failed. Every
 * call's reply is read, whatever the ones before said, so the sink is kIdle again once they are.
 * An error reply (NOPERM, a queue key of the wrong type) is about this service only: the
 * connection stays open for the others, and nothing of that call was written; the script's
 * refusal of a call whose layout key changed is FAILURE_LAYOUT_CHANGED, the others'
 * FAILURE_SERVICE (the first error reply says which). Refusals and
 * *created count only once every call succeeded (a NOSCRIPT batch goes again whole).
 */
static int
SinkReadBatchReply(RedisSink &sink, int *created, List **refusals, SinkFailure *failure)
{
	int	   rc = 1;
	size_t row = 0;
	int	   made = 0;
	List  *refused = NIL;

	for (size_t c = 0; c < sink.call_rows.size(); c++) {
		redisReply *r = SinkRead(sink, sink.deadline, failure);
		size_t		n = sink.call_rows[c];

		if (!r)
			return -1;
		if (r->type == REDIS_REPLY_ERROR && chat_outbox::IsNoScriptError(std::string_view(r->str, r->len))) {
			if (rc == 1)
				rc = 0;
		} else if (r->type == REDIS_REPLY_ERROR) {
			if (rc != -1) {
				bool changed = false;
				bool mark = false;
				char held[sizeof failure->message] = "";

				chat_outbox::CallCpp([&] {
					std::string value;
					changed = chat_outbox::IsLayoutChanged(std::string_view(r->str, r->len), &value);
					mark = !changed && chat_outbox::IsMarkChanged(std::string_view(r->str, r->len), &value);
					strlcpy(held, value.c_str(), sizeof held);
				});
				failure->kind = changed ? FAILURE_LAYOUT_CHANGED : mark ? FAILURE_MARK_CHANGED
																		: FAILURE_SERVICE;
				if (mark)
					strlcpy(failure->message, held, sizeof failure->message);
				else if (changed)
					snprintf(failure->message, sizeof failure->message,
							 "the layout key holds %s now, not what the pass relayed by", held);
				else
					snprintf(failure->message, sizeof failure->message, "batch add: %s", r->str);
			}
			rc = -1;
		} else if (r->type != REDIS_REPLY_ARRAY || r->elements != n) {
			freeReplyObject(r);
			SinkFail(sink, failure, "batch add", "unexpected reply");
			return -1;
		} else
			for (size_t i = 0; i < n; i++) {
				redisReply *e = r->element[i];

				if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
					made++;
				else if (e->type == REDIS_REPLY_STRING) {
					SinkRefusal *refusal = (SinkRefusal *) palloc(sizeof(SinkRefusal));

					refusal->row_id = sink.row_ids[row + i];
					strlcpy(refusal->reason, e->str, sizeof refusal->reason);
					refused = lappend(refused, refusal);
				}
			}
		freeReplyObject(r);
		row += n;
	}
	sink.state = SinkState::kIdle;
	if (rc == 1) {
		*created += made;
		*refusals = list_concat(*refusals, refused);
	}
	return rc;
}

/* SinkReloadScript loads the script again (a Redis restart or SCRIPT FLUSH dropped it) and re-sends the batch. */
static bool
SinkReloadScript(RedisSink &sink, SinkFailure *failure)
{
	redisReply *r;

	chat_outbox::CallCpp([&] {
		sink.handshake.clear();
		EncodeScriptLoad(&sink.handshake);
	});
	if (!SinkAppend(sink, sink.handshake, failure) || !SinkSendBatch(sink, sink.deadline, failure))
		return false;
	r = SinkRead(sink, sink.deadline, failure);
	if (!r)
		return false;
	if (r->type != REDIS_REPLY_STRING) {
		freeReplyObject(r);
		SinkFail(sink, failure, "SCRIPT LOAD", "unexpected reply");
		return false;
	}
	freeReplyObject(r);
	return true;
}

/*
 * RedisSinkAwait waits for the reply to the batch RedisSinkSend sent; a batch whose connection turns
 * out closed goes once more on a new one (SinkResendOnce).
 */
static bool
ShardsAwait(int shard, int *created, List **refusals, SinkFailure *failure)
{
	RedisSink &sink = sinks[shard];
	bool	   reloaded = false;

	*created = 0;
	sink.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
	if (sink.state != SinkState::kInFlight) {
		SinkFail(sink, failure, "batch add", "no batch in flight");
		return false;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		int rc = SinkReadBatchReply(sink, created, refusals, failure);

		if (rc == 1) {
			/* logged only once the batch went through: a reload that fails is an outage, logged as one */
			if (reloaded)
				ereport(LOG, (errmsg("chat_outbox relay: redis had lost the batch-add script; loaded it again"),
							  errdetail("SCRIPT FLUSH, or a restart or failover behind a proxy that kept the connection "
										"open. The batch Redis refused with NOSCRIPT went again.")));
			return true;
		}
		if (rc == 0 && attempt < 2) {
			if (!SinkReloadScript(sink, failure))
				break;
			reloaded = true;
			continue;
		}
		if (rc == 0) {
			SinkFail(sink, failure, "batch add", "script missing after SCRIPT LOAD");
			break;
		}
		if (!SinkResendOnce(sink, &sink.may_resend, failure))
			break;
		/* the idle connection was dead: once more on a new one (its handshake loads the script) */
		if (!SinkEnsureConnected(sink, failure) || !SinkSendBatch(sink, sink.deadline, failure))
			break;
	}
	/* out of attempts with the last sending's reply unread: never leave kInFlight behind */
	if (sink.state == SinkState::kInFlight)
		SinkDisconnect(sink);
	return false;
}

/* Whether SinkQuery's command may go once more on a new connection (SinkResendOnce). */
enum class QueryResend
{
	kOnceIfClosed, /* a read, the layout key's SET: safe twice */
	kNever,		   /* WAIT: it counts its own connection's writes, a new one has none */
};

/*
 * SinkQuery sends the command its caller encoded in sink.query on a shard and returns its reply (the
 * caller frees it), or NULL after a failure. The shard is kIdle before and after: no batch may be in
 * flight on it.
 */
static redisReply *
SinkQuery(RedisSink &sink, SinkFailure *failure, QueryResend resend = QueryResend::kOnceIfClosed)
{
	TimestampTz deadline;
	redisReply *r;
	bool		may_resend;

	failure->kind = FAILURE_CONNECTION;
	failure->shard = 0;
	failure->message[0] = '\0';
	sink.timed_out = false;
	if (!RedisSinkShardUp(sink.index)) {
		/* not tried before its backoff ends */
		failure->shard = sink.index;
		snprintf(failure->message, sizeof failure->message, "redis shard %d is down", sink.index);
		return nullptr;
	}
	if (sink.state == SinkState::kInFlight)
		SinkDisconnect(sink);
	may_resend = resend == QueryResend::kOnceIfClosed && sink.state == SinkState::kIdle;
	for (;;) {
		if (!SinkEnsureConnected(sink, failure))
			return nullptr;
		deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), chat_outbox_redis_timeout);
		sink.state = SinkState::kInFlight;
		if (SinkAppend(sink, sink.query, failure) && SinkFlush(sink, deadline, failure) &&
			(r = SinkRead(sink, deadline, failure)) != nullptr) {
			sink.state = SinkState::kIdle;
			return r;
		}
		if (!SinkResendOnce(sink, &may_resend, failure))
			return nullptr;
	}
}

/* LayoutReplyFailed: an error reply to a layout command is this service's failure (NOPERM, a key of the wrong type). */
static bool
LayoutReplyFailed(redisReply *r, const char *what, SinkFailure *failure)
{
	if (r->type != REDIS_REPLY_ERROR)
		return false;
	failure->kind = FAILURE_SERVICE;
	snprintf(failure->message, sizeof failure->message, "%s: %s", what, r->str);
	freeReplyObject(r);
	return true;
}

static bool
ShardsGetLayout(const char *queue, int *layout, LayoutKeyValue *raw, SinkFailure *failure)
{
	RedisSink  &sink = sinks[0];
	redisReply *r;
	bool		ok = false;
	bool		absent;
	bool		whole;

	chat_outbox::CallCpp([&] {
		sink.query.clear();
		chat_outbox::RespCommand(&sink.query, 2).Arg("GET").Arg(chat_outbox::LayoutKey(chat_outbox_bullmq_prefix, queue));
	});
	if (!(r = SinkQuery(sink, failure)) || LayoutReplyFailed(r, "reading the layout key", failure))
		return false;
	absent = r->type == REDIS_REPLY_NIL;
	raw->state = absent ? LAYOUT_KEY_ABSENT : LAYOUT_KEY_HOLDS;
	raw->value[0] = '\0';
	if (r->type == REDIS_REPLY_STRING)
		strlcpy(raw->value, r->str, sizeof raw->value);
	/* the exact bytes or none: a value cut short here would never equal the key in the script's check */
	whole = absent || (r->type == REDIS_REPLY_STRING && r->len < sizeof raw->value && strlen(r->str) == r->len);
	chat_outbox::CallCpp([&] {
		auto n = whole ? chat_outbox::ParseLayout(absent ? std::nullopt : std::optional<std::string>(raw->value))
					   : std::nullopt;
		if (n) {
			*layout = *n;
			ok = true;
		} else {
			/* the reply's own bytes, escaped: the buffer above stops at a NUL */
			std::string_view shown = r->type == REDIS_REPLY_STRING ? std::string_view(r->str, r->len) : std::string_view();
			strlcpy(failure->message, chat_outbox::LayoutValueProblem(queue, shown).c_str(), sizeof failure->message);
		}
	});
	freeReplyObject(r);
	if (!ok)
		failure->kind = FAILURE_SERVICE;
	return ok;
}

static bool
ShardsSetLayout(const char *queue, int partitions, SinkFailure *failure)
{
	RedisSink  &sink = sinks[0];
	redisReply *r;

	chat_outbox::CallCpp([&] {
		sink.query.clear();
		chat_outbox::RespCommand(&sink.query, 3)
			.Arg("SET")
			.Arg(chat_outbox::LayoutKey(chat_outbox_bullmq_prefix, queue))
			.Arg(static_cast<long long>(partitions));
	});
	if (!(r = SinkQuery(sink, failure)) || LayoutReplyFailed(r, "writing the layout key", failure))
		return false;
	freeReplyObject(r);
	return true;
}

static bool
ShardsCountJobs(const char *queue, int partitions, int64 *jobs, SinkFailure *failure)
{
	*jobs = 0;
	for (int s = 0; s < nshards; s++) {
		RedisSink  &sink = sinks[s];
		redisReply *r;
		bool		any = false;

		chat_outbox::CallCpp([&] {
			auto keys = chat_outbox::QueueJobsKeys(chat_outbox_bullmq_prefix, queue, partitions, s, nshards);
			sink.query.clear();
			any = !keys.empty();
			chat_outbox::RespCommand cmd(&sink.query, 3 + keys.size());
			cmd.Arg("EVAL").Arg(chat_outbox::QueueJobsScript()).Arg(static_cast<long long>(keys.size()));
			for (const auto &k : keys)
				cmd.Arg(k);
		});
		if (!any)
			continue;
		if (!(r = SinkQuery(sink, failure)) || LayoutReplyFailed(r, "counting the old layout's jobs", failure))
			return false;
		if (r->type == REDIS_REPLY_INTEGER)
			*jobs += r->integer;
		freeReplyObject(r);
	}
	return true;
}

static bool
ShardsWaitReplicas(int shard, int replicas, SinkFailure *failure)
{
	RedisSink  &sink = sinks[shard];
	int			wait_ms = Max(chat_outbox_redis_timeout / 2, 1); /* never 0: WAIT 0 blocks for ever */
	redisReply *r;
	long long	acks;
	char		why[CHAT_OUTBOX_ERRLEN];

	failure->kind = FAILURE_CONNECTION;
	failure->shard = shard;
	failure->message[0] = '\0';
	/* WAIT counts the writes of this connection: a new one would have none to wait for */
	if (sink.state != SinkState::kIdle) {
		SinkFail(sink, failure, "WAIT", "the connection is not idle");
		return false;
	}
	chat_outbox::CallCpp([&] {
		sink.query.clear();
		chat_outbox::RespCommand(&sink.query, 3).Arg("WAIT").Arg(std::to_string(replicas)).Arg(std::to_string(wait_ms));
	});
	if (!(r = SinkQuery(sink, failure, QueryResend::kNever)))
		return false;
	if (r->type != REDIS_REPLY_INTEGER) {
		strlcpy(why, r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply", sizeof why);
		freeReplyObject(r);
		SinkFail(sink, failure, "WAIT", why);
		return false;
	}
	acks = r->integer;
	freeReplyObject(r);
	if (acks < replicas) {
		snprintf(why, sizeof why, "%lld of %d replicas acknowledged the pass within %d ms (chat_outbox.redis_min_replicas)",
				 acks, replicas, wait_ms);
		SinkFail(sink, failure, "WAIT", why);
		return false;
	}
	return true;
}

static int64
ShardsConnects(void)
{
	return shard_connects;
}

static bool
ShardsGetMark(int shard, const char *queue, int partitions, int partition, char **mark, SinkFailure *failure)
{
	RedisSink  &sink = sinks[shard];
	redisReply *r;

	chat_outbox::CallCpp([&] {
		sink.query.clear();
		chat_outbox::RespCommand(&sink.query, 2)
			.Arg("GET")
			.Arg(chat_outbox::MarkKey(chat_outbox_bullmq_prefix, chat_outbox::PartitionQueue(queue, partitions, partition)));
	});
	if (!(r = SinkQuery(sink, failure)) || LayoutReplyFailed(r, "reading a relay mark", failure))
		return false;
	*mark = r->type == REDIS_REPLY_STRING ? pnstrdup(r->str, r->len) : nullptr;
	freeReplyObject(r);
	return true;
}

/* a shard's master is found directly or by its Sentinels: no slot map to watch */
static bool
ShardsNoPromotion(void)
{
	return false;
}

const SinkOps shard_ops = {
	ShardsEnsureConnected, ShardsSend, ShardsAwait, ShardsWaitReplicas, ShardsGetLayout, ShardsSetLayout,
	ShardsCountJobs, ShardsConnects, ShardsGetMark, ShardsDisconnect, ShardsWarning, ShardsAppendfsync, ShardsNoPromotion, ShardsNoPromotion,
	true, /* with one shard, every call checks the layout key (ChooseLayout) */
};

/* The public functions (redis_sink.hpp): chat_outbox.redis_url parsed, then the operations in use. */
bool
RedisSinkEnsureConnected(SinkFailure *failure)
{
	char error[CHAT_OUTBOX_ERRLEN];

	failure->kind = FAILURE_CONNECTION;
	failure->shard = 0;
	failure->message[0] = '\0';
	if (!ParseShards(error, sizeof error)) {
		snprintf(failure->message, sizeof failure->message, "invalid chat_outbox.redis_url: %s", error);
		return false;
	}
	return ops->ensure_connected(failure);
}

bool
RedisSinkSend(int shard, const char *service, const char *queue, int partitions, const LayoutKeyValue *layout,
			  const SinkCall *calls, int ncalls, const OutboxRow *rows, SinkFailure *failure)
{
	return ops->send(shard, service, queue, partitions, layout, calls, ncalls, rows, failure);
}

bool
RedisSinkAwait(int shard, int *created, List **refusals, SinkFailure *failure)
{
	return ops->await(shard, created, refusals, failure);
}

bool
RedisSinkWaitReplicas(int shard, int replicas, SinkFailure *failure)
{
	return ops->wait_replicas(shard, replicas, failure);
}

bool
RedisSinkGetLayout(const char *queue, int *layout, LayoutKeyValue *raw, SinkFailure *failure)
{
	return ops->get_layout(queue, layout, raw, failure);
}

bool
RedisSinkSetLayout(const char *queue, int partitions, SinkFailure *failure)
{
	return ops->set_layout(queue, partitions, failure);
}

bool
RedisSinkCountJobs(const char *queue, int partitions, int64 *jobs, SinkFailure *failure)
{
	return ops->count_jobs(queue, partitions, jobs, failure);
}

int64
RedisSinkConnects(void)
{
	return ops->connects();
}

bool
RedisSinkGetMark(int shard, const char *queue, int partitions, int partition, char **mark, SinkFailure *failure)
{
	return ops->get_mark(shard, queue, partitions, partition, mark, failure);
}

void
RedisSinkDisconnect(void)
{
	ops->disconnect();
}

bool
RedisSinkAwaitingPromotion(void)
{
	return ops->awaiting_promotion();
}

bool
RedisSinkPromoted(void)
{
	return ops->promoted();
}

const char *
RedisSinkWarning(void)
{
	return ops->warning();
}

const char *
RedisSinkAppendfsync(void)
{
	return ops->appendfsync();
}

bool
RedisSinkBatchChecksLayout(void)
{
	return nshards == 1 && ops->batch_checks_layout;
}
