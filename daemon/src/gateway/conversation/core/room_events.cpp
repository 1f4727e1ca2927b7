// daemon/src/gateway/conversation/core/room_events.cpp - see room_events.hpp.
#include "gateway/conversation/core/room_events.hpp"

#include <algorithm>

namespace chat_outboxd::conv {

void
RoomEvents::Online(int64_t chat, int64_t online)
{
	online_[chat] = online;
}

bool
RoomEvents::Big(int64_t chat) const
{
	auto it = online_.find(chat);
	return it != online_.end() && it->second > threshold_;
}

bool
RoomEvents::Hold(std::map<std::string, Change> &m, bool &more, const std::string &key, const nlohmann::json &user,
                 bool state)
{
	auto it = m.find(key);
	if (it != m.end()) {
		it->second.now = state;
		return true;
	}
	if (m.size() >= kHeldUsers) {
		more = true;
		return false;
	}
	m.emplace(key, Change{user, !state, state});
	return true;
}

nlohmann::json
RoomEvents::Presence(int64_t chat, const std::string &key, const nlohmann::json &user, bool present, int64_t online)
{
	online_[chat] = online;
	Held &h = chats_[chat];
	h.online = online;
	// In a small chat a change goes out at once while the burst lasts and nothing of the chat waits (so the
	// changes a client sees stay in order).
	if (online <= threshold_ && h.sent < kBurst && h.presence.empty() && !h.presence_more) {
		h.sent++;
		return {{"chat_id", chat}, {"user", user}, {"present", present}, {"online", online}};
	}
	Hold(h.presence, h.presence_more, key, user, present);
	return nullptr;
}

bool
RoomEvents::Typing(int64_t chat, const std::string &key, const nlohmann::json &user, bool typing)
{
	if (!Big(chat))
		return true;
	Held &h = chats_[chat];
	Hold(h.typing, h.typing_more, key, user, typing);
	return false;
}

std::vector<RoomEvents::Frame>
RoomEvents::Tick()
{
	std::vector<Frame> out;
	for (auto &[chat, h] : chats_) {
		if (!h.presence.empty() || h.presence_more) {
			bool big = h.online > threshold_;
			size_t cap = big ? kBigDiff : static_cast<size_t>(std::max<int64_t>(threshold_, 1));
			nlohmann::json joined = nlohmann::json::array(), left = nlohmann::json::array();
			bool more = h.presence_more;
			for (auto &[key, c] : h.presence) {
				if (c.now == c.before)
					continue; // came and went (or the reverse) within the interval
				nlohmann::json &list = c.now ? joined : left;
				if (list.size() < cap)
					list.push_back(std::move(c.user));
				else
					more = true;
			}
			if (!joined.empty() || !left.empty() || more)
				out.push_back({chat, "presence", {{"chat_id", chat}, {"online", h.online}, {"joined", std::move(joined)}, {"left", std::move(left)}, {"more", more}}});
		}
		if (!h.typing.empty() || h.typing_more) {
			nlohmann::json users = nlohmann::json::array();
			bool more = h.typing_more;
			for (auto &[key, c] : h.typing) {
				if (users.size() < kBigDiff)
					users.push_back({{"user", std::move(c.user)}, {"typing", c.now}});
				else
					more = true;
			}
			out.push_back({chat, "typing", {{"chat_id", chat}, {"users", std::move(users)}, {"more", more}}});
		}
	}
	// A chat that sent at once in this interval stays listed (its burst counted) for one more interval, so the
	// interval after a burst starts it afresh; one with nothing in this interval is dropped.
	for (auto it = chats_.begin(); it != chats_.end();) {
		Held &h = it->second;
		bool active = h.sent > 0 || !h.presence.empty() || h.presence_more || !h.typing.empty() || h.typing_more;
		if (!active) {
			it = chats_.erase(it);
			continue;
		}
		int64_t online = h.online;
		h = Held{};
		h.online = online;
		++it;
	}
	return out;
}

} // namespace chat_outboxd::conv
