// tests/unit/base/c_boundary_test.cpp - CallFromC: what a C library gets back from our callbacks.
#include "base/c_boundary.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

using chat_outboxd::CallFromC;

TEST(CallFromC, AnExceptionStopsAtTheBoundary)
{
	int ran = 0;
	CallFromC("test", "a callback", [&] {
		ran++;
		throw std::runtime_error("boom");
	});
	CallFromC("test", "a callback", [&] {
		ran++;
		throw 42; // not a std::exception either
	});
	EXPECT_EQ(ran, 2);
}

TEST(CallFromC, AnswersTheResultOrTheFallback)
{
	EXPECT_EQ(CallFromC("test", "a callback", -1, [] { return 7; }), 7);
	EXPECT_EQ(CallFromC("test", "a callback", -1, []() -> int { throw std::runtime_error("boom"); }), -1);
}
