/*
 * extension/src/pg/relay_pass.hpp - one claim -> push -> mark pass over one service's outbox.
 *
 * The worker and chat_outbox.relay_pass() (for isolation specs) run this same code.
 */
#pragma once

#include "pg/redis_sink.hpp"

typedef struct RelayService
{
	char		name[NAMEDATALEN];
	char		queue[256];
	SPIPlanPtr	claim_plan;
	SPIPlanPtr	mark_plan;
	SPIPlanPtr	purge_plan;
} RelayService;

/* RelayServiceFor returns the cached entry for `name` (plans kept across passes), creating it. */
RelayService *RelayServiceFor(const char *name, const char *queue);
/* RelayServiceFind returns the cached entry for `name`; it must exist (RelayServiceFor made it). */
RelayService *RelayServiceFind(const char *name);
void		RelayForgetServices(void);

/*
 * RelayClaimPushMark needs a transaction, SPI_connect and an active snapshot. Returns the number of
 * rows relayed, or -1 when Redis failed (*failure says why; the caller must roll back).
 * With ids_out, *ids_out is an SPI_palloc'd array of the relayed outbox ids, in order.
 */
int			RelayClaimPushMark(RelayService *svc, int batch_size, int64 **ids_out, SinkFailure *failure);

/* RelayUseIndexOrderForSession gives the worker's whole session the planner settings of the passes. */
void		RelayUseIndexOrderForSession(void);

/* RelayPurgeSent deletes up to `limit` sent rows older than retention_s; returns how many. */
int			RelayPurgeSent(RelayService *svc, int retention_s, int limit);
