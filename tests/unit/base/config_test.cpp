// tests/unit/base/config_test.cpp - flags, environment, defaults and validation of chat-outboxd settings.
#include <gtest/gtest.h>

#include "base/core/config.hpp"

using namespace chat_outboxd;

namespace {

bool
Parse(std::vector<std::string> args, std::vector<std::string> env, Config *cfg, std::string *err)
{
	bool help = false;
	return ParseConfig(args, env, cfg, &help, err);
}

} // namespace

TEST(Config, FlagsBeatEnvironmentBeatsDefaults)
{
	Config cfg;
	std::string err;
	ASSERT_TRUE(Parse({"--service", "workers", "--batch-size=7"},
	                  {"CHAT_OUTBOXD_JWT_SECRET=s", "CHAT_OUTBOXD_BATCH_SIZE=9", "CHAT_OUTBOXD_QUEUE=q1"}, &cfg, &err))
	    << err;
	EXPECT_EQ(cfg.service, "workers");
	EXPECT_EQ(cfg.batch_size, 7);
	EXPECT_EQ(cfg.queue, "q1");
	EXPECT_EQ(cfg.jwt_secret, "s");
	EXPECT_EQ(cfg.lock_duration, 30000);
	EXPECT_EQ(cfg.prefix, "bull");
}

TEST(Config, Errors)
{
	Config cfg;
	std::string err;
	EXPECT_FALSE(Parse({"--jwt-secret", "s"}, {}, &cfg, &err));
	EXPECT_NE(err.find("--service"), std::string::npos);
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", "s", "--bogus", "1"}, {}, &cfg, &err));
	EXPECT_NE(err.find("unknown option --bogus"), std::string::npos);
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", "s", "--batch-size", "x"}, {}, &cfg, &err));
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", "s", "--batch-size", "0"}, {}, &cfg, &err));
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", "s", "--lock-duration", "5"}, {}, &cfg, &err));
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret"}, {}, &cfg, &err));
	EXPECT_NE(err.find("needs a value"), std::string::npos);
}

TEST(Config, HelpListsEveryOptionWithItsEnvName)
{
	std::string help = HelpText();
	for (const auto &o : Options()) {
		EXPECT_NE(help.find(std::string("--") + o.name + " "), std::string::npos) << o.name;
		EXPECT_NE(help.find(EnvName(o.name)), std::string::npos) << o.name;
	}
	EXPECT_EQ(EnvName("redis-url"), "CHAT_OUTBOXD_REDIS_URL");
	Config cfg;
	bool h = false;
	std::string err;
	EXPECT_TRUE(ParseConfig({"--help"}, {}, &cfg, &h, &err));
	EXPECT_TRUE(h);
}

TEST(Config, WebRootDefaultsToTheInstalledClientAndEmptyServesNothing)
{
	Config cfg;
	std::string err;
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "s"}, {}, &cfg, &err)) << err;
	EXPECT_EQ(cfg.web_root, CHAT_OUTBOXD_DEFAULT_WEB_ROOT);
	EXPECT_NE(cfg.web_root.find("/share/chat_outbox/web"), std::string::npos);
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "s", "--web-root="}, {}, &cfg, &err)) << err;
	EXPECT_EQ(cfg.web_root, "");
	Config from_env;
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "s"}, {"CHAT_OUTBOXD_WEB_ROOT=/srv/chat"}, &from_env, &err)) << err;
	EXPECT_EQ(from_env.web_root, "/srv/chat");
}
