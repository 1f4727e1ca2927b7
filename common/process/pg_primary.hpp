// common/process/pg_primary.hpp - how chat-outboxd and chat-outbox-relay ask libpq for a primary.
//
// Both write (the inbox, the outbox's marks), so a connection to a standby, or to a node that was
// demoted while a proxy still routed to it, is useless: libpq's target_session_attrs=primary makes
// every (re)connect check the server is not in recovery (in_hot_standby, or pg_is_in_recovery() on a
// server older than 14) and try the next host instead. Passed to PQconnect*Params before the expanded
// dbname (the URL), whose keywords win: a URL that says target_session_attrs keeps its own choice
// (read-write also refuses a standby). docs/ha.md, "Nothing stays on a Postgres that lost the lead".
#pragma once

namespace chat_outbox {

inline constexpr const char *kTargetSessionAttrsKey = "target_session_attrs";
inline constexpr const char *kTargetSessionAttrsPrimary = "primary";

} // namespace chat_outbox
