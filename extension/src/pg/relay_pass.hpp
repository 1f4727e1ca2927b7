/*
 * extension/src/pg/relay_pass.hpp - one mark -> push pass over one service's outbox.
 *
 * The worker and chat_outbox.relay_pass() (for isolation specs) run this same code.
 */
#pragma once

#include "pg/batch_read.hpp"
#include "pg/redis_sink.hpp"

#include "common/relay/service_standing.hpp"

typedef struct RelayService
{
	char		   name[NAMEDATALEN];
	char		   queue[256];
	SPIPlanPtr	   claim_plan;	/* reads the next batch of the windows, moving the cursors (relay_batch) */
	BatchReadPlans read;		/* the same read in the usual case, by kept plans */
	SPIPlanPtr	   rotate_plan; /* one step of the outbox's rotation */
	SPIPlanPtr	   refuse_plan; /* records a row Redis refused and why */
	SPIPlanPtr	   inbox_purge_plan;
	SPIPlanPtr	   partitions_plan;		   /* reads the service's partition count */
	SPIPlanPtr	   checks_plan;			   /* whether the pass must run chat_outbox.pass_checks (1.6 on; NULL before) */
	SPIPlanPtr	   marks_plan;			   /* the cursors' marks (relay_sql::kMarks; NULL until the SQL has them) */
	bool		   before_1_2;			   /* its outbox is still 1.1's (a table with sent_at): relayed the 1.1 way */
	int			   layout;				   /* the count its last pass relayed under (0: none yet): which partitions a
											* down shard holds */
	bool		   layout_waiting;		   /* a change of its count waits for the old queues (logged once) */
	LayoutKeyValue layout_key;			   /* the layout key's raw value that `layout` was chosen by, until a pass
											* fails: what its batches on shard 0 expect the key to hold */
	chat_outbox::ServiceStanding standing; /* relaying, failing (FAILURE_SERVICE) or waiting, and its next
											* pass's time on RelayNowMs's clock (memset: relaying) */
	int	 purge_failures[2];				   /* outbox rotations, inbox purges of this service that failed in a row */
	char rotation_wait[256];			   /* what the rotation waited for at its last step ("": nothing), logged on change */
} RelayService;

/* RelayServiceFor returns the cached entry for `name` (plans kept across passes), creating it. */
RelayService *RelayServiceFor(const char *name, const char *queue);
/* RelayServiceFind returns the cached entry for `name`; it must exist (RelayServiceFor made it). */
RelayService *RelayServiceFind(const char *name);
void		  RelayForgetServices(void);
/* RelayForgetPlans frees one service's plans (after its SQL failed: a table may have been replaced). */
void RelayForgetPlans(RelayService *svc);

/*
 * A backlog is drained in passes of up to this many batches in one transaction, so that Postgres
 * works on the next batch while Redis runs the current one; a bigger pass would only hold its row
 * locks (and, on a Redis failure, its rolled-back work) longer.
 */
#define RELAY_PASS_MAX_BATCHES 8

/*
 * RelayPass needs a READ COMMITTED transaction, SPI_connect and an active snapshot. Returns the
 * number of rows relayed (batch_size * RELAY_PASS_MAX_BATCHES means there may be more), or -1 when
 * Redis failed or its answer was lost (*failure says why; the caller must roll back, which leaves
 * the cursors where they were).
 * With ids_out, *ids_out is an SPI_palloc'd array of the relayed outbox ids, in push order.
 */
int RelayPass(RelayService *svc, int batch_size, int64 **ids_out, SinkFailure *failure);

/* RelayUseIndexOrderForSession gives the worker's whole session the planner settings of the passes. */
void RelayUseIndexOrderForSession(void);

/* RelayRotate runs one step of the service's outbox rotation (retention_s: 0 never switches); returns 0. */
int RelayRotate(RelayService *svc, int retention_s);
/* RelayPurgeInbox deletes inbox rows received more than retention_s ago, among the `limit` lowest seqs. */
int RelayPurgeInbox(RelayService *svc, int retention_s, int limit);
