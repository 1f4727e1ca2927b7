// daemon/src/gateway/hub/core/batch_lines.hpp - BatchLines: the lines that make many clients' equal reads
// one database read. Each key (a chat, a set of chats) has one line of members waiting for a read and at
// most one read in flight; members that come while it is out wait in the line for the next one. So a storm
// of N joins into one chat costs O(reads in flight) round trips, not N, and the window that gathers a
// batch is exactly the time the key's previous read took (no timer, no added wait for a lone join).
//
// Rules:
// - A key is ready when its line holds members and no read of it is in flight; NextReady gives the ready
//   keys oldest first (the caller starts their reads while the database has room: --query-queue).
// - Take starts a key's read: it marks the key in flight and takes members oldest first within a member
//   cap and a byte cap (the caller says what a member weighs; the first member is taken whatever it
//   weighs, so a line always moves). A huge room's line is never read whole: the rest waits for the next.
// - Done ends the read: the key is ready again if members came meanwhile, else forgotten (nothing stays
//   behind a chat whose joins are over).
// Members that went away while waiting are dropped at Take by the caller's keep predicate.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

namespace chat_outboxd {

template <typename Key, typename Member>
class BatchLines {
  public:
	void Add(const Key &key, Member m)
	{
		Line &line = lines_[key];
		line.waiting.push_back(std::move(m));
		if (!line.reading && line.waiting.size() == 1)
			ready_.push_back(key);
	}

	// NextReady pops the oldest ready key (none: nullopt).
	std::optional<Key> NextReady()
	{
		while (!ready_.empty()) {
			Key k = std::move(ready_.front());
			ready_.pop_front();
			auto it = lines_.find(k);
			if (it != lines_.end() && !it->second.reading && !it->second.waiting.empty())
				return k;
		}
		return std::nullopt;
	}

	// Take marks key in flight and returns its oldest members that keep(m) accepts, at most max_members of
	// them and at most max_bytes by weight(m) (but always the first kept one).
	template <typename Keep, typename Weight>
	std::vector<Member> Take(const Key &key, size_t max_members, size_t max_bytes, Keep keep, Weight weight)
	{
		std::vector<Member> out;
		Line &line = lines_[key];
		line.reading = true;
		size_t bytes = 0;
		while (!line.waiting.empty() && out.size() < max_members) {
			Member &m = line.waiting.front();
			if (!keep(m)) {
				line.waiting.pop_front();
				continue;
			}
			size_t w = weight(m);
			if (!out.empty() && bytes + w > max_bytes)
				break;
			bytes += w;
			out.push_back(std::move(m));
			line.waiting.pop_front();
		}
		return out;
	}

	// Done: key's read answered (or failed).
	void Done(const Key &key)
	{
		auto it = lines_.find(key);
		if (it == lines_.end())
			return;
		it->second.reading = false;
		if (it->second.waiting.empty())
			lines_.erase(it);
		else
			ready_.push_back(key);
	}

	bool Reading(const Key &key) const
	{
		auto it = lines_.find(key);
		return it != lines_.end() && it->second.reading;
	}
	size_t Waiting(const Key &key) const
	{
		auto it = lines_.find(key);
		return it == lines_.end() ? 0 : it->second.waiting.size();
	}
	// Keys: the keys with a line or a read in flight (the tests see nothing stays behind).
	size_t Keys() const { return lines_.size(); }

  private:
	struct Line {
		std::deque<Member> waiting;
		bool reading = false;
	};
	std::map<Key, Line> lines_;
	std::deque<Key> ready_; // keys that became ready, oldest first (checked again when popped)
};

} // namespace chat_outboxd
