// common/bullmq/queue_keys.hpp - the BullMQ key layout under one queue, and which job ids are safe.
//
// BullMQ keeps a queue's own structures and its jobs side by side: the wait list is
// "<prefix>:<queue>:wait" and the job "wait" would be "<prefix>:<queue>:wait" too. A job id that
// names one of the queue's keys turns the queue's structure into a job (or the reverse), so the
// rule of which ids may become job keys lives here, once, for the extension and the daemon.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox::bullmq {

// QueueKey returns "<prefix>:<queue>:<suffix>" (suffix is a key name or a job id).
std::string QueueKey(std::string_view prefix, std::string_view queue, std::string_view suffix);

// BusChannel returns "<prefix>:<queue>:bus", the Redis pub/sub channel on which the consumers of one
// service's queue publish the inbox rows they hand to their gateway, and every gateway of that
// service listens (docs/architecture.md, "The bus"). A channel is not a key: it shares no namespace
// with job ids.
std::string BusChannel(std::string_view prefix, std::string_view queue);

// kNameRule says why IsValidName refuses a name, for messages.
extern const char kNameRule[];

// IsValidName: `name` may be a BullMQ key prefix or queue name: non-empty and without ':'. BullMQ
// splits keys on ':' (its QueueEvents, its scripts, tools like Bull Board), so a ':' in either
// would make "<prefix>:<queue>:<suffix>" ambiguous. Allocates nothing: Postgres' GUC check calls it.
bool IsValidName(std::string_view name) noexcept;

// NameProblem returns "" when IsValidName(name), else why not, with `what` naming the setting:
// `<what> is empty` or `<what> "<name>" contains ':'`.
std::string NameProblem(std::string_view what, std::string_view name);

// kPartitionsKeyName: our own key under a queue, the layout key (common/partitions.hpp, LayoutKey).
constexpr char kPartitionsKeyName[] = "partitions";
// kRelayMarkKeyName: our own key under a partition's queue, the relay's mark (common/relay/bullmq_batch_add.hpp).
constexpr char kRelayMarkKeyName[] = "relay-mark";

// QueueKeyNames lists every name BullMQ 6 puts directly under "<prefix>:<queue>:" for the queue
// itself: QueueKeys (active, wait, paused, ...), the names its scripts build (metrics, dn), the
// state name "waiting" its getters turn into a key, the legacy keys it migrates (delay, priority),
// and chat_outbox's own keys under a queue: partitions (the layout, kPartitionsKeyName), the relay's mark
// (kRelayMarkKeyName), members and lease.
const std::vector<std::string_view> &QueueKeyNames();

// MayNameQueueKey (the relay's rule for the ids it chooses): true when `id` is made of lower-case
// ASCII letters and '-' only. Every queue
// key name has that shape (QueueKeyNames), and so will names a later BullMQ adds, while no
// generated uuid (its version nibble is a digit) and no fallback id ("outbox-<service>-<n>") has
// it: such an id is never used as a job id.
bool MayNameQueueKey(std::string_view id);

// IsQueueKeyName: `id` is one of QueueKeyNames(). The daemon consumes jobs any BullMQ producer adds,
// whose ids may well have the shape above ("bad-json"); it refuses exactly these names, whose job
// key would be one of the queue's own structures.
bool IsQueueKeyName(std::string_view id);

// IsValidJobId: a job id the relay may use as it is: non-empty, at most 200 bytes, only
// [A-Za-z0-9._-] (so no ':' and no "0:" legacy marker form, and no JSON escaping), not
// integer-like (BullMQ's own auto ids are integers and it parses ids with parseInt in places),
// and not of the queue-key shape (MayNameQueueKey).
bool IsValidJobId(std::string_view id);

} // namespace chat_outbox::bullmq
