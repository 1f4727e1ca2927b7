// tests/unit/common/redis_script_test.cpp - the script rules both Redis clients keep: the sha
// EVALSHA names a script by, the EVALSHA / EVAL argv, and which error means NOSCRIPT.
#include "common/redis_script.hpp"

#include <gtest/gtest.h>

using namespace chat_outbox;

TEST(RedisScript, Sha1IsWhatRedisNamesTheTextBy)
{
	// SCRIPT LOAD "return 1" answers this sha; the empty text's is SHA-1's well-known value.
	EXPECT_EQ(ScriptSha1("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
	EXPECT_EQ(ScriptSha1(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	RedisScript s = MakeRedisScript("one", "return 1");
	EXPECT_STREQ(s.name, "one");
	EXPECT_EQ(s.source, "return 1");
	EXPECT_EQ(s.sha1, ScriptSha1("return 1"));
}

TEST(RedisScript, EvalShaAndEvalCarryTheSameKeysAndArgs)
{
	RedisScript s = MakeRedisScript("s", "return KEYS[1]");
	ScriptCall call{&s, {"k1", "k2"}, {"a1", "", "a3"}};
	EXPECT_EQ(EvalShaArgv(call), (std::vector<std::string>{"EVALSHA", s.sha1, "2", "k1", "k2", "a1", "", "a3"}));
	EXPECT_EQ(EvalArgv(call), (std::vector<std::string>{"EVAL", "return KEYS[1]", "2", "k1", "k2", "a1", "", "a3"}));
	ScriptCall none{&s, {}, {}};
	EXPECT_EQ(EvalShaArgv(none), (std::vector<std::string>{"EVALSHA", s.sha1, "0"}));
}

TEST(RedisScript, OnlyTheNoScriptCodeMeansSendTheTextAgain)
{
	EXPECT_TRUE(IsNoScriptError("NOSCRIPT No matching script. Please use EVAL."));
	EXPECT_TRUE(IsNoScriptError("NOSCRIPT"));
	// A script's own error, or another code, is the call's answer: sending the text again would run
	// it twice.
	EXPECT_FALSE(IsNoScriptError("ERR Error running script (call to f_x): NOSCRIPT in a message"));
	EXPECT_FALSE(IsNoScriptError("NOSCRIPTS are fine"));
	EXPECT_FALSE(IsNoScriptError("noscript lower case"));
	EXPECT_FALSE(IsNoScriptError("NOPERM this user has no permissions to run the 'evalsha' command"));
	EXPECT_FALSE(IsNoScriptError(""));
}
