// daemon/src/base/wall_clock.hpp - milliseconds since the epoch, the clock BullMQ stores in jobs
// (processedOn, finishedOn, delayed scores use the client's wall clock: docs/protocols/bullmq.md,
// 'The clock'), not uv_now().
#pragma once

#include <cstdint>

#include <uv.h>

namespace chat_outboxd {

inline int64_t
WallMs()
{
	uv_timeval64_t tv;
	uv_gettimeofday(&tv);
	return tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

inline double
WallSeconds()
{
	uv_timeval64_t tv;
	uv_gettimeofday(&tv);
	return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
}

} // namespace chat_outboxd
