/*
 * extension/src/pg/guc.hpp - the chat_outbox.* settings (defined in guc.cpp).
 */
#pragma once

#include "pg/pg.hpp"

extern char *chat_outbox_database;
extern char *chat_outbox_redis_url;
extern int	 chat_outbox_batch_size;
extern int	 chat_outbox_poll_interval;
extern char *chat_outbox_bullmq_prefix;
extern bool	 chat_outbox_relay_enabled;
extern bool	 chat_outbox_wake_at_commit;
extern int	 chat_outbox_max_body_bytes;
extern int	 chat_outbox_retention;
extern int	 chat_outbox_inbox_retention;
extern int	 chat_outbox_redis_timeout;
extern int	 chat_outbox_min_pass_interval;
extern int	 chat_outbox_redis_min_replicas;

void DefineChatOutboxGucs(void);
