// daemon/src/consumer/core/inbox_push.cpp - see inbox_push.hpp.
#include "consumer/core/inbox_push.hpp"

#include <algorithm>

namespace chat_outboxd {

std::vector<InboxMessage>
RowsToPush(InboxRows &&rows, int64_t pushed_up_to)
{
	std::vector<InboxMessage> out;
	auto take = [&](std::vector<InboxMessage> &from) {
		for (auto &m : from)
			if (m.seq > pushed_up_to && (!rows.read_up_to || m.seq <= *rows.read_up_to))
				out.push_back(std::move(m));
	};
	take(rows.inserted);
	take(rows.existing);
	take(rows.others);
	std::sort(out.begin(), out.end(), [](const InboxMessage &a, const InboxMessage &b) { return a.seq < b.seq; });
	out.erase(std::unique(out.begin(), out.end(),
	                      [](const InboxMessage &a, const InboxMessage &b) { return a.seq == b.seq; }),
	          out.end());
	return out;
}

} // namespace chat_outboxd
