// daemon/src/gateway/auth/core/member_chats.cpp - see member_chats.hpp.
#include "gateway/auth/core/member_chats.hpp"

#include <algorithm>
#include <iterator>

namespace chat_outboxd {

MemberChats
MemberChats::Read(std::vector<int64_t> rows, size_t bound)
{
	std::sort(rows.begin(), rows.end());
	rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
	MemberChats m;
	if (rows.size() > bound) {
		rows.resize(bound);
		m.extent = Extent::First;
	}
	rows.shrink_to_fit();
	m.chats = std::move(rows);
	return m;
}

MemberChats::Verdict
MemberChats::Has(int64_t chat) const
{
	if (std::binary_search(chats.begin(), chats.end(), chat))
		return Verdict::Yes;
	return Cut() ? Verdict::Ask : Verdict::No;
}

bool
MemberChats::Add(int64_t chat, size_t bound)
{
	auto pos = std::lower_bound(chats.begin(), chats.end(), chat);
	if (pos != chats.end() && *pos == chat)
		return true;
	if (Cut() && pos == chats.end())
		return false; // past the first `bound`
	chats.insert(pos, chat);
	if (chats.size() <= bound)
		return true;
	const bool pushed_out = chats.back() == chat;
	chats.pop_back();
	extent = Extent::First;
	return !pushed_out;
}

bool
MemberChats::Remove(int64_t chat)
{
	auto pos = std::lower_bound(chats.begin(), chats.end(), chat);
	if (pos == chats.end() || *pos != chat)
		return false;
	chats.erase(pos);
	return true;
}

std::vector<int64_t>
Gone(const std::vector<int64_t> &asked, const std::vector<int64_t> &first, const std::vector<int64_t> &still)
{
	std::vector<int64_t> found, gone;
	std::set_union(first.begin(), first.end(), still.begin(), still.end(), std::back_inserter(found));
	std::set_difference(asked.begin(), asked.end(), found.begin(), found.end(), std::back_inserter(gone));
	return gone;
}

} // namespace chat_outboxd
