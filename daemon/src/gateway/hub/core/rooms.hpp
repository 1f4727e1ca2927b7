// daemon/src/gateway/hub/core/rooms.hpp - room membership: chat id -> the sockets that see it.
//
// Members are raw pointers owned elsewhere; an owner must Leave every room before it dies.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>

namespace chat_outboxd {

template <typename Member>
class Rooms {
  public:
	using Set = std::unordered_set<Member *>;

	void Join(int64_t room, Member *m) { rooms_[room].insert(m); }
	void Leave(int64_t room, Member *m)
	{
		auto it = rooms_.find(room);
		if (it == rooms_.end())
			return;
		it->second.erase(m);
		if (it->second.empty())
			rooms_.erase(it); // an emptied room must not keep its bucket array alive
	}
	// Members returns null for an empty room.
	const Set *Members(int64_t room) const
	{
		auto it = rooms_.find(room);
		return it == rooms_.end() ? nullptr : &it->second;
	}
	size_t RoomCount() const { return rooms_.size(); }

  private:
	std::unordered_map<int64_t, Set> rooms_;
};

} // namespace chat_outboxd
