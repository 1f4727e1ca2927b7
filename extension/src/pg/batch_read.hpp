/*
 * extension/src/pg/batch_read.hpp - the next batch of a service's windows, read with kept plans.
 *
 * chat_outbox.relay_batch (sql/parts/outbox.sql) is the batch read's definition, and what
 * chat-outbox-relay and the isolation specs call. A call of it is a plpgsql function on a cold
 * cache at every paced message; this file runs its steps as the relay's own kept plans instead, for
 * the usual case: every cursor of the service in one state, no partition left out. Any other case
 * (a Redis shard down, cursors made under another partition count or moved apart, an outbox older
 * than 1.5, a transaction that is not READ COMMITTED) calls relay_batch itself. Both read the same
 * window query (chat_outbox.relay_window_query) and the same generations rule
 * (chat_outbox.window_generations); the steps between are relay_batch's, in its order.
 */
#pragma once

#include "pg/pg.hpp"

typedef struct BatchReadPlans
{
	bool	   prepared;				  /* the plans below are made (the installed SQL has the window query) */
	char	   seq[2 * NAMEDATALEN + 16]; /* the outbox's id sequence, its qualified name */
	SPIPlanPtr lock;					  /* the service's row of chat_outbox.services, FOR NO KEY UPDATE */
	SPIPlanPtr cursors;					  /* its cursors, and the id sequence's last value (a tick's Mpre) */
	SPIPlanPtr tick;					  /* a new snapshot S, the sequence's last value M, the generations */
	SPIPlanPtr window;					  /* the window's rows, in the columns of relay_sql::kClaim */
	SPIPlanPtr finish;					  /* the window is sent: its tick becomes the cursors' last finished one */
	SPIPlanPtr hold;					  /* the window goes on after its last row sent */
} BatchReadPlans;

/*
 * The search_path the plans are made and run under: the window query's text names pg_catalog's
 * functions and operators unqualified (relay_batch runs it under the same setting).
 */
extern const char *const kBatchReadSearchPath;

/* BatchReadForget frees the plans (after a statement of the service failed). */
void BatchReadForget(BatchReadPlans *plans);

/*
 * BatchRead reads the next batch of service `name` in the caller's transaction and moves the
 * cursors past it, as relay_batch(name, batch_size, partitions, excluded) would. Returns false when
 * the case is not the usual one (the caller calls relay_batch then); else true, with
 * *rows the window's rows in the columns of relay_sql::kClaim (id, event, payload as text, the
 * payload's "id", chat_id as text), valid until the caller frees them.
 */
bool BatchRead(BatchReadPlans *plans, const char *name, int batch_size, int partitions, bool excluded_any,
			   SPITupleTable **rows);
