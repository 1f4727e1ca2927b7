// daemon/src/net/deferred_replies.hpp - the failures of commands that never reached Redis (not connected,
// not accepted), answered on a later turn of the loop: a RedisCommands callback never runs inside the
// call that sent it (net/redis_commands.hpp). Shared by RedisConn and ClusterConn.
//
// Rules: Add queues a failure for the next turn, or answers at once once Closing ran (nothing would be
// left to answer later); Closing answers every queued one now (a closing owner); Forget drops the
// callbacks unanswered (an owner destroyed: its callers may be gone).
#pragma once

#include <functional>
#include <list>
#include <string>
#include <utility>

#include <uv.h>

#include "base/uv_timer.hpp"
#include "net/redis_commands.hpp"

namespace chat_outboxd {

class DeferredReplies {
  public:
	DeferredReplies(uv_loop_t *loop, const char *name) : timer_(loop, name) {}

	void Add(RedisCommands::ReplyCb cb, std::string why)
	{
		if (closed_) {
			if (cb)
				cb(nullptr, why);
			return;
		}
		list_.emplace_back(std::move(cb), std::move(why));
		timer_.Start(0, [this] { Flush(); });
	}

	// Closing: the owner is closing: what is queued is answered now, and every later Add at once.
	void Closing()
	{
		closed_ = true;
		Flush();
	}

	void Forget()
	{
		for (auto &d : list_)
			d.first = nullptr;
	}

	// Close: every later Add answers at once; done once the timer's handle is released.
	void Close(std::function<void()> done)
	{
		closed_ = true;
		timer_.Close(std::move(done));
	}

  private:
	void Flush()
	{
		auto list = std::move(list_);
		list_.clear();
		for (auto &d : list)
			if (d.first)
				d.first(nullptr, d.second);
	}

	std::list<std::pair<RedisCommands::ReplyCb, std::string>> list_;
	bool closed_ = false;
	UvTimer timer_;
};

} // namespace chat_outboxd
