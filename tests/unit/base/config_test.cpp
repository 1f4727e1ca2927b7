// tests/unit/base/config_test.cpp - flags, environment, defaults and validation of chat-outboxd settings:
// every row's range, checked at its bounds, and shown in --help.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/core/config.hpp"

using namespace chat_outboxd;

namespace {

// 32 bytes, the shortest --jwt-secret allowed.
const std::string kSecret = "0123456789abcdef0123456789abcdef";

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
	                  {"CHAT_OUTBOXD_JWT_SECRET=" + kSecret, "CHAT_OUTBOXD_BATCH_SIZE=9", "CHAT_OUTBOXD_QUEUE=q1"}, &cfg, &err))
	    << err;
	EXPECT_EQ(cfg.service, "workers");
	EXPECT_EQ(cfg.batch_size, 7);
	EXPECT_EQ(cfg.queue, "q1");
	EXPECT_EQ(cfg.jwt_secret, kSecret);
	EXPECT_EQ(cfg.lock_duration, 30000);
	EXPECT_EQ(cfg.prefix, "bull");
}

TEST(Config, Errors)
{
	Config cfg;
	std::string err;
	EXPECT_FALSE(Parse({"--jwt-secret", kSecret}, {}, &cfg, &err));
	EXPECT_NE(err.find("--service"), std::string::npos);
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", kSecret, "--bogus", "1"}, {}, &cfg, &err));
	EXPECT_NE(err.find("unknown option --bogus"), std::string::npos);
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", kSecret, "--batch-size", "x"}, {}, &cfg, &err));
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", kSecret, "--batch-size", "0"}, {}, &cfg, &err));
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", kSecret, "--lock-duration", "5"}, {}, &cfg, &err));
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

namespace {
// Ok parses the required settings plus args; "" on success, else the error.
std::string
Ok(std::vector<std::string> args, std::vector<std::string> env = {}, Config *out = nullptr)
{
	Config cfg;
	std::string err;
	args.insert(args.begin(), {"--service", "w"});
	if (std::none_of(args.begin(), args.end(), [](const std::string &a) { return a.rfind("--jwt-secret", 0) == 0; }) &&
	    env.empty())
		args.insert(args.end(), {"--jwt-secret", kSecret});
	bool ok = Parse(args, env, &cfg, &err);
	if (out)
		*out = cfg;
	return ok ? "" : err;
}
} // namespace

TEST(Config, ValuesOutsideTheirRangeAreRefused)
{
	EXPECT_NE(Ok({"--batch-size", "5001"}), "");
	EXPECT_EQ(Ok({"--batch-size", "5000"}), "");
	EXPECT_EQ(Ok({"--batch-size", "0"}), "--batch-size must be from 1 to 5000, got 0");
	EXPECT_NE(Ok({"--catchup-limit", "0"}), "");
	EXPECT_NE(Ok({"--max-payload", "100"}), "");
	EXPECT_NE(Ok({"--connect-timeout", "0"}), "");
	EXPECT_NE(Ok({"--ping-interval", "2147483648"}), "");
	EXPECT_EQ(Ok({"--ping-interval", "2147483647"}), "");
	EXPECT_NE(Ok({"--remove-on-complete", "-2"}), "");
	EXPECT_EQ(Ok({"--remove-on-complete", "-1"}), "");
	EXPECT_NE(Ok({"--max-stalled-count", "-1"}), "");
	EXPECT_NE(Ok({"--crash-after-inbox", "-1"}), "");
	EXPECT_NE(Ok({}, {"CHAT_OUTBOXD_JWT_SECRET=" + kSecret, "CHAT_OUTBOXD_CATCHUP_LIMIT=0"}), "");
}

TEST(Config, LogLevelIsOneOfItsChoices)
{
	Config cfg;
	ASSERT_EQ(Ok({"--log-level", "debug"}, {}, &cfg), "");
	EXPECT_EQ(cfg.log_level, "debug");
	EXPECT_EQ(Ok({"--log-level", "warning"}), "");
	EXPECT_EQ(Ok({"--log-level", "debg"}), "--log-level must be one of debug, verbose, notice, warning, got 'debg'");
	EXPECT_NE(Ok({"--log-level", ""}), "");
	EXPECT_NE(Ok({"--log-level", "Debug"}), "");
}

TEST(Config, AShortJwtSecretIsRefusedWithoutShowingIt)
{
	const std::string short_secret = kSecret.substr(0, 31);
	std::string err = Ok({"--jwt-secret", short_secret});
	EXPECT_NE(err.find("--jwt-secret must be 32 bytes or more"), std::string::npos) << err;
	EXPECT_EQ(err.find(short_secret.substr(0, 8)), std::string::npos) << err;
	err = Ok({}, {"CHAT_OUTBOXD_JWT_SECRET=" + short_secret});
	EXPECT_NE(err.find("--jwt-secret"), std::string::npos) << err;
	EXPECT_EQ(err.find(short_secret.substr(0, 8)), std::string::npos) << err;
	EXPECT_EQ(Ok({"--jwt-secret", kSecret}), "");
}

TEST(Config, AudienceAndIssuerAreOptional)
{
	Config cfg;
	ASSERT_EQ(Ok({}, {}, &cfg), "");
	EXPECT_EQ(cfg.jwt_audience, "");
	EXPECT_EQ(cfg.jwt_issuer, "");
	ASSERT_EQ(Ok({"--jwt-audience", "chat-clients"}, {"CHAT_OUTBOXD_JWT_SECRET=" + kSecret, "CHAT_OUTBOXD_JWT_ISSUER=backend"}, &cfg), "");
	EXPECT_EQ(cfg.jwt_audience, "chat-clients");
	EXPECT_EQ(cfg.jwt_issuer, "backend");
}

TEST(Config, EveryRowsRangeHoldsItsDefaultAndIsCheckedAtItsBounds)
{
	Config defaults;
	for (const auto &o : Options()) {
		ASSERT_LE(o.min, o.max) << o.name;
		if (std::string(o.type) != "int")
			continue;
		std::string flag = std::string("--") + o.name;
		// The one rule between two rows (a catch-up page fits twice in a client's queue budget) is
		// kept out of the way with the smallest page.
		std::vector<std::string> with_min = {flag, std::to_string(o.min)};
		if (flag == "--client-queue-bytes")
			with_min.insert(with_min.end(), {"--catchup-page-bytes", "1024"});
		EXPECT_EQ(Ok(with_min), "") << o.name;
		std::string err = Ok({flag, std::to_string(o.min - 1)});
		EXPECT_NE(err.find(flag + " must be "), std::string::npos) << err;
		EXPECT_NE(err.find(AllowedText(o)), std::string::npos) << err;
		if (o.max != kNoLimit) {
			EXPECT_EQ(Ok({flag, std::to_string(o.max)}), "") << o.name;
			EXPECT_NE(Ok({flag, std::to_string(o.max + 1)}), "") << o.name;
		}
	}
	// Nothing given but the required settings: every default is inside its row's range.
	EXPECT_EQ(Ok({}), "");
	EXPECT_EQ(Ok({"--client-queue-bytes", "2097151"}), "--client-queue-bytes must be at least twice --catchup-page-bytes");
}

TEST(Config, HelpShowsEachRange)
{
	std::string help = HelpText();
	EXPECT_NE(help.find("  --batch-size <int>\n      jobs fetched per round trip\n"
	                    "      env CHAT_OUTBOXD_BATCH_SIZE, default 100\n      allowed 1 to 5000\n"),
	          std::string::npos)
	    << help;
	EXPECT_NE(help.find("CHAT_OUTBOXD_JWT_SECRET, required\n      allowed 32 bytes or more\n"), std::string::npos);
	EXPECT_NE(help.find("CHAT_OUTBOXD_CATCHUP_LIMIT, default 10000\n      allowed 1 or more\n"), std::string::npos);
	for (const auto &o : Options()) {
		if (std::string(o.type) == "int") {
			EXPECT_NE(help.find("      allowed " + AllowedText(o) + "\n"), std::string::npos) << o.name;
		}
	}
	EXPECT_NE(help.find("CHAT_OUTBOXD_LOG_LEVEL, default notice\n      allowed debug, verbose, notice, warning\n"),
	          std::string::npos);
	// A string any text may fill has no range line.
	EXPECT_EQ(help.find("CHAT_OUTBOXD_QUEUE, default chat-messages\n      allowed"), std::string::npos);
}

TEST(Config, WebRootDefaultsToTheInstalledClientAndEmptyServesNothing)
{
	Config cfg;
	std::string err;
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "0123456789abcdef0123456789abcdef"}, {}, &cfg, &err)) << err;
	EXPECT_EQ(cfg.web_root, CHAT_OUTBOXD_DEFAULT_WEB_ROOT);
	EXPECT_NE(cfg.web_root.find("/share/chat_outbox/web"), std::string::npos);
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "0123456789abcdef0123456789abcdef", "--web-root="}, {}, &cfg, &err)) << err;
	EXPECT_EQ(cfg.web_root, "");
	Config from_env;
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", "0123456789abcdef0123456789abcdef"}, {"CHAT_OUTBOXD_WEB_ROOT=/srv/chat"}, &from_env, &err)) << err;
	EXPECT_EQ(from_env.web_root, "/srv/chat");
}

TEST(Config, LeaseSettings)
{
	Config cfg;
	std::string err;
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", kSecret}, {}, &cfg, &err)) << err;
	EXPECT_EQ(cfg.lease_ttl, 5000);
	EXPECT_EQ(cfg.leave_partitions, "");
	ASSERT_TRUE(Parse({"--service", "w", "--jwt-secret", kSecret, "--lease-ttl", "300", "--leave-partitions", "1,3",
	                   "--redis-url", "redis://a:1/0 redis://b:2/0"},
	                  {}, &cfg, &err))
	    << err;
	EXPECT_EQ(cfg.lease_ttl, 300);
	EXPECT_EQ(cfg.leave_partitions, "1,3");
	EXPECT_EQ(cfg.redis_url, "redis://a:1/0 redis://b:2/0");
	EXPECT_FALSE(Parse({"--service", "w", "--jwt-secret", kSecret, "--lease-ttl", "299"}, {}, &cfg, &err));
	EXPECT_NE(err.find("--lease-ttl must be from 300"), std::string::npos) << err;
}
