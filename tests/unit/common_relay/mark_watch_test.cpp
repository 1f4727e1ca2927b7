// tests/unit/common_relay/mark_watch_test.cpp - when a relay reads its marks in Redis before a pass.
#include <gtest/gtest.h>

#include "common/relay/mark_watch.hpp"

using namespace chat_outbox;

TEST(MarkWatch, ReadAtFirst)
{
	MarkWatch w;
	EXPECT_EQ(w.Now(), MarkWatch::State::kUnread);
	EXPECT_TRUE(w.MustRead(1, 0));
}

TEST(MarkWatch, NotAgainWhileNothingChanged)
{
	MarkWatch w;
	w.Read(2, 7);
	EXPECT_FALSE(w.MustRead(2, 7));
	EXPECT_FALSE(w.MustRead(2, 7));
}

TEST(MarkWatch, AgainAfterAConnection)
{
	MarkWatch w;
	w.Read(2, 7);
	EXPECT_TRUE(w.MustRead(2, 8)); // another server, or the same with older data
	w.Read(2, 8);
	EXPECT_FALSE(w.MustRead(2, 8));
}

TEST(MarkWatch, AgainAfterAFailedPass)
{
	MarkWatch w;
	w.Read(1, 1);
	w.Forget();
	EXPECT_TRUE(w.MustRead(1, 1));
}

TEST(MarkWatch, AgainUnderAnotherCount)
{
	MarkWatch w;
	w.Read(2, 1);
	EXPECT_TRUE(w.MustRead(4, 1));
	EXPECT_TRUE(w.MustRead(0, 1)); // the count not known yet: the pass reads the cursors'
}
