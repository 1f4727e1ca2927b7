// tests/unit/relay/relay_config_test.cpp - chat-outbox-relay's settings (relay/src/core/relay_config).
#include <gtest/gtest.h>

#include "core/relay_config.hpp"

using chat_outbox::relay::ParseRelayConfig;
using chat_outbox::relay::RelayConfig;

TEST(RelayConfig, DefaultsWithoutFlagsOrEnvironment)
{
	RelayConfig cfg;
	bool help = true;
	std::string error;
	ASSERT_TRUE(ParseRelayConfig({}, {}, &cfg, &help, &error)) << error;
	EXPECT_FALSE(help);
	EXPECT_EQ(cfg.batch_size, 500);
	EXPECT_EQ(cfg.poll_interval, 1000);
	EXPECT_EQ(cfg.prefix, "bull");
}

TEST(RelayConfig, FlagWinsOverEnvironment)
{
	RelayConfig cfg;
	bool help = false;
	std::string error;
	ASSERT_TRUE(ParseRelayConfig({"--batch-size", "20", "--redis-url=redis://h:1/2"},
	                             {"CHAT_OUTBOX_RELAY_BATCH_SIZE=30", "CHAT_OUTBOX_RELAY_POLL_INTERVAL=250"}, &cfg, &help,
	                             &error))
	    << error;
	EXPECT_EQ(cfg.batch_size, 20);
	EXPECT_EQ(cfg.poll_interval, 250);
	EXPECT_EQ(cfg.redis_url, "redis://h:1/2");
}

TEST(RelayConfig, RefusesWhatItCannotUse)
{
	RelayConfig cfg;
	bool help = false;
	std::string error;
	EXPECT_FALSE(ParseRelayConfig({"--batch-size", "0"}, {}, &cfg, &help, &error));
	EXPECT_NE(error.find("--batch-size"), std::string::npos) << error;
	EXPECT_FALSE(ParseRelayConfig({"--batch-size", "12x"}, {}, &cfg, &help, &error));
	EXPECT_FALSE(ParseRelayConfig({"--nope", "1"}, {}, &cfg, &help, &error));
	EXPECT_FALSE(ParseRelayConfig({"--prefix"}, {}, &cfg, &help, &error));
	EXPECT_FALSE(ParseRelayConfig({}, {"CHAT_OUTBOX_RELAY_POLL_INTERVAL=-1"}, &cfg, &help, &error));
	EXPECT_NE(error.find("CHAT_OUTBOX_RELAY_POLL_INTERVAL"), std::string::npos) << error;
	EXPECT_FALSE(ParseRelayConfig({"--wake", "wal"}, {}, &cfg, &help, &error));
	EXPECT_NE(error.find("--wake"), std::string::npos) << error;
}

TEST(RelayConfig, WakeIsNotifyUnlessLogicalIsAsked)
{
	RelayConfig cfg;
	bool help = false;
	std::string error;
	ASSERT_TRUE(ParseRelayConfig({}, {}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.wake, "notify");
	ASSERT_TRUE(ParseRelayConfig({}, {"CHAT_OUTBOX_RELAY_WAKE=logical"}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.wake, "logical");
}

TEST(RelayConfig, UsageNamesEverySettingAndItsVariable)
{
	std::string usage = chat_outbox::relay::Usage();
	for (const auto &opt : chat_outbox::relay::Options()) {
		EXPECT_NE(usage.find(std::string("--") + opt.name), std::string::npos) << opt.name;
		EXPECT_NE(usage.find(chat_outbox::relay::EnvName(opt.name)), std::string::npos) << opt.name;
	}
}

TEST(RelayConfig, RedisMinReplicas)
{
	RelayConfig cfg;
	bool help = false;
	std::string error;
	ASSERT_TRUE(ParseRelayConfig({}, {}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.redis_min_replicas, 0); // no WAIT unless asked
	ASSERT_TRUE(ParseRelayConfig({}, {"CHAT_OUTBOX_RELAY_REDIS_MIN_REPLICAS=1"}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.redis_min_replicas, 1);
	EXPECT_FALSE(ParseRelayConfig({"--redis-min-replicas", "-1"}, {}, &cfg, &help, &error));
	EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

TEST(RelayConfig, MetricsListenIsOffUnlessAnAddressIsGiven)
{
	RelayConfig cfg;
	bool help = false;
	std::string error;
	ASSERT_TRUE(ParseRelayConfig({}, {}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.metrics_listen, "off");
	ASSERT_TRUE(ParseRelayConfig({}, {"CHAT_OUTBOX_RELAY_METRICS_LISTEN=127.0.0.1:9465"}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.metrics_listen, "127.0.0.1:9465");
	ASSERT_TRUE(ParseRelayConfig({"--metrics-listen", "[::1]:9465"}, {}, &cfg, &help, &error)) << error;
	EXPECT_EQ(cfg.metrics_listen, "[::1]:9465");
	EXPECT_FALSE(ParseRelayConfig({"--metrics-listen", "9465"}, {}, &cfg, &help, &error));
	EXPECT_NE(error.find("--metrics-listen"), std::string::npos) << error;
	EXPECT_FALSE(ParseRelayConfig({"--metrics-listen", "127.0.0.1:70000"}, {}, &cfg, &help, &error));
}
