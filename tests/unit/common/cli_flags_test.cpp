// tests/unit/common/cli_flags_test.cpp - reading argv into flags (common/process/cli_flags.*).
#include <gtest/gtest.h>

#include "common/process/cli_flags.hpp"

using chat_outbox::CliFlag;
using chat_outbox::SplitFlags;

namespace {

bool
Known(std::string_view name)
{
	return name == "queue" || name == "batch-size";
}

} // namespace

TEST(CliFlags, BothSpellingsInOrder)
{
	std::vector<CliFlag> out;
	bool help = true;
	std::string error;
	ASSERT_TRUE(SplitFlags({"--queue", "a", "--batch-size=5", "--queue=b=c", "--queue="}, Known, &out, &help, &error))
	    << error;
	EXPECT_FALSE(help);
	ASSERT_EQ(out.size(), 4u);
	EXPECT_EQ(out[0].name, "queue");
	EXPECT_EQ(out[0].value, "a");
	EXPECT_EQ(out[1].name, "batch-size");
	EXPECT_EQ(out[1].value, "5");
	EXPECT_EQ(out[2].value, "b=c"); // only the first '=' splits
	EXPECT_EQ(out[3].value, "");
}

TEST(CliFlags, HelpStops)
{
	std::vector<CliFlag> out;
	bool help = false;
	std::string error;
	EXPECT_TRUE(SplitFlags({"--queue", "a", "-h", "--bogus"}, Known, &out, &help, &error));
	EXPECT_TRUE(help);
	EXPECT_TRUE(SplitFlags({"--help"}, Known, &out, &help, &error));
	EXPECT_TRUE(help);
}

TEST(CliFlags, Refusals)
{
	std::vector<CliFlag> out;
	bool help = false;
	std::string error;
	EXPECT_FALSE(SplitFlags({"queue"}, Known, &out, &help, &error));
	EXPECT_EQ(error, "unexpected argument 'queue'");
	EXPECT_FALSE(SplitFlags({"--bogus", "1"}, Known, &out, &help, &error));
	EXPECT_EQ(error, "unknown option --bogus (see --help)");
	EXPECT_FALSE(SplitFlags({"--queue"}, Known, &out, &help, &error));
	EXPECT_EQ(error, "--queue needs a value");
}
