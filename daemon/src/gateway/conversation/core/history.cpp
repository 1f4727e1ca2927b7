// daemon/src/gateway/conversation/core/history.cpp - see history.hpp.
#include "gateway/conversation/core/history.hpp"

#include "gateway/client/core/message_json.hpp"

namespace chat_outboxd {

namespace {

nlohmann::json
RowJson(const HistoryRow &r, bool received)
{
	nlohmann::json m = {{"id", r.id}, {"chat_id", r.chat_id}, {"body", r.body}};
	m["created_at"] = r.created_at ? nlohmann::json(*r.created_at) : nlohmann::json(nullptr);
	m["sender"] = r.sender ? nlohmann::json(*r.sender) : nlohmann::json(nullptr);
	m["seq"] = received ? nlohmann::json(r.seq) : nlohmann::json(nullptr);
	m["dir"] = received ? "in" : "out";
	AddChangeFields(m, r.edited_at.value_or(""), r.deleted_at.value_or(""));
	return m;
}

} // namespace

HistoryPage
MergeHistory(const conv::HistoryRequest &req, const HistoryKind &received, const HistoryKind &sent, size_t max_bytes)
{
	HistoryPage page;
	page.next_before_seq = req.before_seq;
	page.next_before_sent = req.before_sent;
	size_t i = 0, j = 0, bytes = 0;
	int64_t taken = 0;
	while (taken < req.limit && bytes < max_bytes) {
		bool have_in = i < received.rows.size(), have_out = j < sent.rows.size();
		// A kind cut short by its query must not be overtaken by the other: what it did not fetch may be newer.
		if ((!have_in && !received.complete) || (!have_out && !sent.complete) || (!have_in && !have_out))
			break;
		bool take_in = have_in && (!have_out || received.rows[i].time_us >= sent.rows[j].time_us);
		const HistoryRow &r = take_in ? received.rows[i++] : sent.rows[j++];
		page.messages.push_back(RowJson(r, take_in));
		bytes += r.body.size();
		taken++;
		if (take_in)
			page.next_before_seq = r.seq;
		else
			page.next_before_sent = conv::SentCursor{r.created_at.value_or(""), r.id};
	}
	page.more = i < received.rows.size() || !received.complete || j < sent.rows.size() || !sent.complete;
	return page;
}

nlohmann::json
HistoryResult(int64_t chat_id, const HistoryPage &page)
{
	nlohmann::json next = {{"before_seq", page.next_before_seq ? nlohmann::json(*page.next_before_seq) : nlohmann::json(nullptr)},
	                       {"before_sent", page.next_before_sent ? nlohmann::json(conv::EncodeSentCursor(*page.next_before_sent))
	                                                             : nlohmann::json(nullptr)}};
	return {{"ok", true}, {"chat_id", chat_id}, {"messages", page.messages}, {"next", std::move(next)}, {"more", page.more}};
}

} // namespace chat_outboxd
