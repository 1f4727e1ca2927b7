// daemon/src/gateway/core/http_request.cpp - see http_request.hpp.
#include "gateway/core/http_request.hpp"

namespace chat_outboxd::http {

bool
PathIntact(std::string_view stored, size_t path_len, std::string_view next, bool has_query)
{
	size_t gap = has_query ? 2 : 1;
	if (stored.size() < path_len + gap + next.size())
		return false;
	for (size_t i = 0; i < path_len; i++) {
		auto u = static_cast<unsigned char>(stored[i]);
		if (u < 0x20 || u == 0x7f)
			return false;
	}
	return stored[path_len] == '\0' && stored.substr(path_len + gap, next.size()) == next;
}

} // namespace chat_outboxd::http
