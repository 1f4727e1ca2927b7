// daemon/src/gateway/send/core/client_msg_id.hpp - the rule for a send's client_msg_id, checked before
// any SQL: 1 to kMaxClientMsgIdBytes bytes, no control character (U+0000 to U+001F, U+007F). The same
// rule as chat_outbox.check_client_msg_id (sql/parts/services.sql), which send_message applies again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace chat_outboxd {

inline constexpr size_t kMaxClientMsgIdBytes = 64;
// The SQLSTATE of a client_msg_id sent again with another body (send_message's refusal).
inline constexpr std::string_view kClientMsgIdConflict = "CM409";

// ClientMsgIdError: why id is not a client_msg_id, or nothing when it is one.
std::optional<std::string> ClientMsgIdError(std::string_view id);

} // namespace chat_outboxd
