/*
 * extension/src/pg/guc.cpp - every chat_outbox.* setting, in one place.
 *
 * Contexts: database is postmaster (the worker connects once); redis_url is sighup and
 * superuser-only because it can hold a password; max_body_bytes is suset so applications cannot
 * raise their own limit; the rest are sighup so the worker picks them up on reload.
 * docs/extension.md has the same table for readers.
 */
#include "pg/guc.hpp"

#include "common/bullmq/queue_keys.hpp"

char *chat_outbox_database = nullptr;
char *chat_outbox_redis_url = nullptr;
int	  chat_outbox_batch_size = 500;
int	  chat_outbox_poll_interval = 1000;
char *chat_outbox_bullmq_prefix = nullptr;
bool  chat_outbox_relay_enabled = true;
bool  chat_outbox_wake_at_commit = true;
int	  chat_outbox_max_body_bytes = 65536;
int	  chat_outbox_retention = 86400;
int	  chat_outbox_inbox_retention = 0;
int	  chat_outbox_redis_timeout = 2000;
int	  chat_outbox_min_pass_interval = 5;
int	  chat_outbox_redis_min_replicas = 0;

static bool
CheckPrefix(char **newval, void **extra, GucSource source)
{
	if (*newval == nullptr || !chat_outbox::bullmq::IsValidName(*newval)) {
		GUC_check_errdetail("%s.", chat_outbox::bullmq::kNameRule);
		return false;
	}
	return true;
}

void
DefineChatOutboxGucs(void)
{
	DefineCustomStringVariable("chat_outbox.database", gettext_noop("Database the relay worker connects to."),
							   gettext_noop("The worker relays the outboxes of this one database."),
							   &chat_outbox_database, "postgres", PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
	DefineCustomStringVariable(
		"chat_outbox.redis_url", gettext_noop("Redis the relay writes BullMQ jobs to: one URL, several separated by whitespace (shards), or one redis-cluster:// URL."),
		gettext_noop("redis://[[user]:password@]host[:port][/db], unix:///path?db=N or "
					 "redis-sentinel://[[user]:password@]host:port[,host:port...]/master[?db=N]; rediss://, "
					 "rediss-sentinel:// and rediss-cluster:// speak TLS (?cacert=PATH&cert=PATH&key=PATH&sni=NAME). Visible to superusers only."),
		&chat_outbox_redis_url, "redis://127.0.0.1:6379", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("chat_outbox.batch_size", gettext_noop("Outbox rows per relay batch."),
							gettext_noop("Each batch is one read of the relay's windows (its cursors move past the rows), and one Redis round trip."),
							&chat_outbox_batch_size, 500, 1, 5000, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("chat_outbox.poll_interval", gettext_noop("Fallback poll interval of the relay."),
							gettext_noop("The relay is woken at commit; this timer catches what the wake-up misses."),
							&chat_outbox_poll_interval, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
							nullptr, nullptr);
	DefineCustomStringVariable("chat_outbox.bullmq_prefix", gettext_noop("BullMQ key prefix."), nullptr,
							   &chat_outbox_bullmq_prefix, "bull", PGC_SIGHUP, 0, CheckPrefix, nullptr, nullptr);
	DefineCustomBoolVariable("chat_outbox.relay_enabled", gettext_noop("Relays outbox rows to Redis when on."),
							 gettext_noop("Off pauses relaying without a restart; rows wait in the outbox."),
							 &chat_outbox_relay_enabled, true, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	DefineCustomBoolVariable("chat_outbox.wake_at_commit", gettext_noop("Wakes the relay when an outbox insert commits."),
							 gettext_noop("Off leaves only the poll_interval timer (for benchmarks)."),
							 &chat_outbox_wake_at_commit, true, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("chat_outbox.max_body_bytes", gettext_noop("Largest message body send_message accepts."),
							nullptr, &chat_outbox_max_body_bytes, 65536, 1, 256 * 1024 * 1024, PGC_SUSET, 0,
							nullptr, nullptr, nullptr);
	DefineCustomIntVariable("chat_outbox.retention", gettext_noop("How long sent outbox rows are kept."),
							gettext_noop("Each outbox generation takes rows this long; the relay truncates the oldest "
										 "once it is past all its rows. 0 keeps them."),
							&chat_outbox_retention, 86400, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr,
							nullptr);
	DefineCustomIntVariable("chat_outbox.inbox_retention", gettext_noop("How long received inbox rows are kept."),
							gettext_noop("The relay deletes inbox rows received longer ago than this, in small batches. "
										 "0 keeps them."),
							&chat_outbox_inbox_retention, 0, 0, INT_MAX, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr,
							nullptr);
	DefineCustomIntVariable("chat_outbox.redis_timeout", gettext_noop("Timeout of one Redis connect or batch."),
							gettext_noop("A batch not answered in time is rolled back and retried with backoff."),
							&chat_outbox_redis_timeout, 2000, 10, 600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
							nullptr);
	DefineCustomIntVariable("chat_outbox.min_pass_interval", gettext_noop("Least time between two relay passes while commits stream in."),
							gettext_noop("After a pass that relayed more than one row, rows committed within this window "
										 "share the next pass. A single paced commit is never delayed. 0 turns it off."),
							&chat_outbox_min_pass_interval, 5, 0, 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
	DefineCustomIntVariable("chat_outbox.redis_min_replicas", gettext_noop("Redis replicas a relay pass must reach before it commits."),
							gettext_noop("After a pass's batches, WAIT for this many replicas' acknowledgements (within half of "
										 "redis_timeout); fewer roll the pass back, so its rows go again. 0 does not wait."),
							&chat_outbox_redis_min_replicas, 0, 0, 100, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	MarkGUCPrefixReserved("chat_outbox");
}
