// daemon/src/gateway/deadlines.cpp - drives the gateway's TimerHeap with one libuv timer and routes
// each due Timer to its handler (see core/timer_heap.hpp for why not lws_sul).
#include <algorithm>

#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

void
Gateway::Impl::ScheduleIn(Timer &t, int64_t delay_ms)
{
	timers.Schedule(&t, static_cast<int64_t>(uv_now(loop)) + std::max<int64_t>(0, delay_ms));
	// Re-arm only when this deadline comes first: most reschedules (a pong pushing the next ping
	// 25 s out) leave the earliest deadline where it was and touch libuv not at all.
	if (ticker_due < 0 || t.due < ticker_due)
		ArmTicker();
}

void
Gateway::Impl::Cancel(Timer &t)
{
	// The ticker may now fire early for nothing; OnTick re-arms it then. Cheaper than re-arming
	// on every cancel.
	timers.Cancel(&t);
}

void
Gateway::Impl::ArmTicker()
{
	if (!ticker || timers.Empty()) {
		if (ticker)
			ticker->Stop();
		ticker_due = -1;
		return;
	}
	ticker_due = timers.NextDue();
	int64_t now = static_cast<int64_t>(uv_now(loop));
	ticker->Start(static_cast<uint64_t>(std::max<int64_t>(0, ticker_due - now)), [this] { OnTick(); });
}

void
Gateway::Impl::OnTick()
{
	ticker_due = -1;
	int64_t now = static_cast<int64_t>(uv_now(loop));
	while (TimerNode *n = timers.PopDue(now)) {
		auto *t = static_cast<Timer *>(n);
		try {
			Fire(*t);
		} catch (const std::exception &e) {
			Log(Level::Warning, "gateway: timer error: %s", e.what());
			if (t->owner)
				CloseClient(*t->owner, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "internal error");
		}
	}
	ArmTicker();
}

void
Gateway::Impl::Fire(Timer &t)
{
	switch (t.kind) {
	case Timer::Kind::Heartbeat: {
		auto &s = static_cast<Session &>(*t.owner);
		if (s.close_due && !s.websocket && !s.held_get)
			DropClient(s); // CloseClient found nobody to tell
		else if (s.awaiting_pong)
			OnDeadline(s);
		else
			OnPingTimer(s);
		return;
	}
	case Timer::Kind::Expiry:
		OnTokenExpired(*t.owner);
		return;
	case Timer::Kind::Probe:
		OnProbeTimeout(static_cast<Session &>(*t.owner));
		return;
	case Timer::Kind::Keepalive:
		OnKeepalive(static_cast<PlainClient &>(*t.owner));
		return;
	case Timer::Kind::HighSeqRetry:
		LoadHighSeq();
		return;
	}
}

} // namespace chat_outboxd
