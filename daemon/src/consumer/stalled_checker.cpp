// daemon/src/consumer/stalled_checker.cpp - see stalled_checker.hpp.
#include "consumer/stalled_checker.hpp"

#include <algorithm>

#include "consumer/core/bullmq_job.hpp"
#include "base/log.hpp"
#include "base/wall_clock.hpp"

namespace chat_outboxd {

StalledChecker::StalledChecker(uv_loop_t *loop, RedisCommands &cmd, QueueKeys keys, int64_t interval_ms, Metrics &metrics)
    : cmd_(cmd), keys_(std::move(keys)), interval_ms_(interval_ms), metrics_(metrics),
      timer_(loop, "stalled-check")
{
}

void
StalledChecker::Start()
{
	if (running_)
		return;
	running_ = true;
	uint64_t period = static_cast<uint64_t>(interval_ms_ + std::clamp<int64_t>(interval_ms_ / 50, 5, 500));
	timer_.Start(
	    0, [this] { Run(); }, period);
}

void
StalledChecker::Close()
{
	timer_.Close();
}

void
StalledChecker::Run()
{
	if (!cmd_.Ready())
		return;
	cmd_.Eval(StalledCheckCall(keys_, WallMs(), interval_ms_),
	          [this](const RedisValue *r, const std::string &err) {
		if (!r || r->IsError()) {
			Log(Level::Verbose, "stalled check failed: %s", r ? r->str.c_str() : err.c_str());
			return;
		}
		if (r->elements.empty())
			return;
		metrics_.stalled_recovered += r->elements.size();
		Log(Level::Notice, "stalled check requeued %zu job(s), first %s", r->elements.size(),
		    r->elements[0].str.c_str());
	});
}

} // namespace chat_outboxd
