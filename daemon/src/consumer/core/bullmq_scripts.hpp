// daemon/src/consumer/core/bullmq_scripts.hpp - the Lua scripts the consumer runs against a BullMQ queue.
//
// Our own scripts, not copied from bullmq, keeping BullMQ 6's keys and transitions
// (docs/protocols/bullmq.md: 'Fetching', 'Completing', 'Failing', 'Retrying and backoff',
// 'Locks and tokens', 'Stalled jobs'). Every state change of a job is one script, so a real bullmq Worker
// sharing the queue never sees a half-done transition. Argument layouts are documented on each
// builder in bullmq_calls.hpp, which is the only code that should assemble them.
#pragma once

#include <string>

#include "common/redis_script.hpp"

namespace chat_outboxd {

using LuaScript = chat_outbox::RedisScript;

// FetchScript moves up to N jobs from wait (then prioritized) to active, locks each.
const LuaScript &FetchScript();
// CompleteScript finishes a batch into `completed` (checking every lock token).
const LuaScript &CompleteScript();
// FailScript finishes a batch into `failed` (final failure: poison data or `defa`).
const LuaScript &FailScript();
// RetryScript puts jobs back (delayed with backoff, or straight to wait) after a failed attempt.
const LuaScript &RetryScript();
// ExtendLocksScript renews the locks of every held job in one call.
const LuaScript &ExtendLocksScript();
// StalledCheckScript requeues active jobs whose lock expired since the previous check
// (docs/protocols/bullmq.md, 'Stalled jobs').
const LuaScript &StalledCheckScript();
// RecoverIdentityScript requeues, at the front and in queue order, the active jobs whose lock
// belongs to our identity (a predecessor killed before it could finish them), and on a takeover
// of a partition's lease those of every earlier holder.
const LuaScript &RecoverIdentityScript();

} // namespace chat_outboxd
