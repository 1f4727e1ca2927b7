// daemon/src/gateway/hub/core/user_index.hpp - who is connected as which user: a token's sub -> its
// admitted sockets on this gateway. A membership change of a user touches only that user's sockets,
// and the gateway knows when a user's last socket is gone (its cached chats may then go too).
//
// Members are raw pointers owned elsewhere; an owner must Remove itself before it dies. A user has a
// few sockets (tabs, devices), so each user's list is a small vector, not a set.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace chat_outboxd {

template <typename Member>
class UserIndex {
  public:
	using List = std::vector<Member *>;

	// Add puts m under user (once, however often it is added).
	void Add(const std::string &user, Member *m)
	{
		List &l = users_[user];
		if (std::find(l.begin(), l.end(), m) == l.end())
			l.push_back(m);
	}
	// Remove takes m from under user: true when that was the user's last member (the user is gone
	// from the index), false when others remain or m was not there.
	bool Remove(const std::string &user, Member *m)
	{
		auto it = users_.find(user);
		if (it == users_.end())
			return false;
		List &l = it->second;
		auto pos = std::find(l.begin(), l.end(), m);
		if (pos == l.end())
			return false;
		*pos = l.back();
		l.pop_back();
		if (!l.empty())
			return false;
		users_.erase(it); // a user who left must not keep its key and list alive
		return true;
	}
	// Of returns the user's members (null when none).
	const List *Of(const std::string &user) const
	{
		auto it = users_.find(user);
		return it == users_.end() ? nullptr : &it->second;
	}
	size_t Users() const { return users_.size(); }
	void Clear() { users_.clear(); }

  private:
	std::unordered_map<std::string, List> users_;
};

} // namespace chat_outboxd
