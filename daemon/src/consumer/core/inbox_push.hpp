// daemon/src/consumer/core/inbox_push.hpp - which inbox rows a write hands to the clients.
//
// Clients resume from a seq and drop a seq they already have, so the rule is: after each write,
// push every committed row above the highest seq pushed so far, in seq order, once. That covers the
// new rows, the rows an earlier attempt of the batch committed before its connection was lost, the
// messages of the batch another writer committed first, and other writers' rows outside the batch.
// Pushing a row below it would be too late (clients are already past it); not pushing one above it
// would be a loss (the next push carries clients past it).
#pragma once

#include <cstdint>
#include <vector>

#include "inbox/core/delivery.hpp"
#include "inbox/core/inbox_sql.hpp"

namespace chat_outboxd {

// RowsToPush returns the rows of `rows` above pushed_up_to, in seq order, each seq once. When the
// other writers' rows were cut short (read_up_to), it stops there: the rest are other writers' rows
// of the next write.
std::vector<InboxMessage> RowsToPush(InboxRows &&rows, int64_t pushed_up_to);

} // namespace chat_outboxd
