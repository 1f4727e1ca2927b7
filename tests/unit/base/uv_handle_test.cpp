// tests/unit/base/uv_handle_test.cpp - the handle owner's rules on a real libuv loop: a handle is
// closed once whoever asks, its owner may go at any time, and close callbacks are counted.
#include "base/uv_handle.hpp"

#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "base/uv_timer.hpp"

using chat_outboxd::CloseAll;
using chat_outboxd::CloseLeftovers;
using chat_outboxd::UvHandle;
using chat_outboxd::UvTimer;

namespace {

struct Loop {
	uv_loop_t loop;
	Loop() { uv_loop_init(&loop); }
	~Loop()
	{
		uv_run(&loop, UV_RUN_DEFAULT);
		EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle was left open";
	}
	void Run() { uv_run(&loop, UV_RUN_DEFAULT); }
};

} // namespace

TEST(UvHandle, CloseTwiceClosesOnceAndAnswersBoth)
{
	Loop l;
	UvTimer t(&l.loop, "t");
	int closed = 0;
	t.Close([&] { closed++; });
	t.Close([&] { closed++; }); // libuv aborts on a second uv_close; this must not reach it
	l.Run();
	EXPECT_EQ(closed, 2);
}

TEST(UvHandle, OwnerDestroyedWhileTheLoopRuns)
{
	Loop l;
	auto t = std::make_unique<UvTimer>(&l.loop, "t");
	int fired = 0;
	t->Start(0, [&] { fired++; });
	t.reset(); // the handle outlives its owner until libuv has closed it
	l.Run();
	EXPECT_EQ(fired, 0);
}

TEST(UvHandle, CallbackMayDestroyItsOwner)
{
	Loop l;
	auto t = std::make_unique<UvTimer>(&l.loop, "t");
	int fired = 0;
	t->Start(0, [&] {
		fired++;
		t.reset();
	});
	l.Run();
	EXPECT_EQ(fired, 1);
}

TEST(UvHandle, ExceptionInACallbackStaysOnOurSide)
{
	Loop l;
	UvTimer t(&l.loop, "t");
	int after = 0;
	t.Start(
	    0, [&] {
		    if (after++ == 0)
			    throw std::runtime_error("boom");
		    t.Close();
	    },
	    1);
	l.Run();
	EXPECT_EQ(after, 2); // the throw was logged and contained; the repeat fired again
}

TEST(UvHandle, CloseAllRunsDoneAfterTheLastCloseCallback)
{
	Loop l;
	UvTimer a(&l.loop, "a"), b(&l.loop, "b"), c(&l.loop, "c");
	c.Close(); // already closing: counted all the same
	int done = 0;
	CloseAll([&] { done++; }, a, b, c);
	EXPECT_EQ(done, 0); // libuv runs close callbacks on the next loop iteration
	l.Run();
	EXPECT_EQ(done, 1);
}

TEST(UvHandle, CloseAllOfNothingOpenIsDoneAtOnce)
{
	Loop l;
	UvTimer a(&l.loop, "a");
	a.Close();
	l.Run();
	int done = 0;
	CloseAll([&] { done++; }, a);
	EXPECT_EQ(done, 1);
}

// The exit path: the loop has stopped with a handle its owner never closed. CloseLeftovers closes it
// through its owner's box, and the owner's destructor afterwards does not close it again (the
// daemon's own uv_walk did, and aborted in uv_close).
TEST(UvHandle, LeftoversClosedAtExitAreNotClosedAgainByTheirOwner)
{
	Loop l;
	auto t = std::make_unique<UvTimer>(&l.loop, "t");
	t->Start(1000, [] {});
	t->Stop();
	uv_timer_t foreign; // a handle that is not ours (libwebsockets' kind)
	uv_timer_init(&l.loop, &foreign);
	l.Run(); // returns: nothing active
	EXPECT_EQ(CloseLeftovers(&l.loop), 2);
	l.Run();
	EXPECT_FALSE(t->Active());
	t->Start(0, [] { ADD_FAILURE() << "a closed timer fired"; });
	t.reset();
	EXPECT_EQ(CloseLeftovers(&l.loop), 0);
}

TEST(UvHandle, InitAgainReplacesTheHandle)
{
	Loop l;
	UvHandle<uv_timer_t> h;
	ASSERT_EQ(h.Init([&](uv_timer_t *t) { return uv_timer_init(&l.loop, t); }), 0);
	ASSERT_EQ(h.Init([&](uv_timer_t *t) { return uv_timer_init(&l.loop, t); }), 0); // the first is closed
	EXPECT_NE(h.get(), nullptr);
	int failed = h.Init([](uv_timer_t *) { return UV_EINVAL; });
	EXPECT_EQ(failed, UV_EINVAL);
	EXPECT_FALSE(h);
}
