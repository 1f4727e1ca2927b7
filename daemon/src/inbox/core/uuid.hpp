// daemon/src/inbox/core/uuid.hpp - the one check that a text is a uuid as Postgres prints it (any
// case): a job's id, a history cursor's id, a client's message_id before it is sent to Postgres.
#pragma once

#include <cctype>
#include <string_view>

namespace chat_outboxd {

inline bool
IsUuid(std::string_view s)
{
	if (s.size() != 36)
		return false;
	for (size_t i = 0; i < s.size(); i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i])))
			return false;
	}
	return true;
}

} // namespace chat_outboxd
