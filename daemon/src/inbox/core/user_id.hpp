// daemon/src/inbox/core/user_id.hpp - the one rule for a user id (a token's sub): a message's sender,
// a read cursor's user, a presence member. The daemon's copy of chat_outbox.check_user_id
// (sql/parts/services.sql), so what the database would refuse is refused before it is sent there.
#pragma once

#include <string_view>

namespace chat_outboxd {

constexpr size_t kMaxUserIdBytes = 200;

// IsUserId: 1 to 200 bytes, no control character (U+0000-U+001F, U+007F).
bool IsUserId(std::string_view s);

} // namespace chat_outboxd
