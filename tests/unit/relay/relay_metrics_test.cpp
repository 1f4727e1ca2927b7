// tests/unit/relay/relay_metrics_test.cpp - chat-outbox-relay's /metrics text and its request line.
#include "core/relay_metrics.hpp"

#include <gtest/gtest.h>

using namespace chat_outbox::relay;

namespace {

bool
Has(const std::string &text, const std::string &line)
{
	return text.find("\n" + line + "\n") != std::string::npos;
}

} // namespace

TEST(RelayMetrics, EveryStateIsASampleAndOnlyTheCurrentOneIsOne)
{
	RelayFigures f;
	f.state = RelayState::kBackingOff;
	std::string text = RenderRelayMetrics(f, {});
	EXPECT_TRUE(Has(text, "# TYPE chat_outbox_relay_state gauge")) << text;
	EXPECT_TRUE(Has(text, "chat_outbox_relay_state{state=\"backing off\"} 1")) << text;
	for (const char *other : {"starting", "running", "waiting for postgres", "stopping"})
		EXPECT_TRUE(Has(text, std::string("chat_outbox_relay_state{state=\"") + other + "\"} 0")) << other;
}

TEST(RelayMetrics, PassesRelayedAndConnections)
{
	RelayFigures f;
	f.state = RelayState::kRunning;
	f.last_pass_unix = 1764680000.5;
	f.rounds = 12;
	f.relayed = {{"consumers", 40}, {"workers", 2}};
	f.postgres_up = true;
	f.redis_up = {true, false};
	f.postgres_reconnects = 1;
	f.redis_reconnects = 3;
	std::string text = RenderRelayMetrics(f, {});
	EXPECT_TRUE(Has(text, "chat_outbox_relay_last_pass_timestamp_seconds 1764680000.5")) << text;
	EXPECT_TRUE(Has(text, "chat_outbox_relay_rounds_total 12"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_relayed_total{service=\"consumers\"} 40"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_relayed_total{service=\"workers\"} 2"));
	EXPECT_TRUE(Has(text, "# TYPE chat_outbox_relay_relayed_total counter"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_postgres_up 1"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_redis_up{shard=\"0\"} 1"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_redis_up{shard=\"1\"} 0"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_redis_durable 1"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_postgres_reconnects_total 1"));
	EXPECT_TRUE(Has(text, "chat_outbox_relay_redis_reconnects_total 3"));
}

TEST(RelayMetrics, BacklogOnlyWhenItWasRead)
{
	RelayFigures f;
	BacklogRead backlog;
	std::string text = RenderRelayMetrics(f, backlog);
	EXPECT_TRUE(Has(text, "chat_outbox_relay_backlog_read_ok 0")) << text;
	EXPECT_EQ(text.find("chat_outbox_unsent"), std::string::npos) << text;
	backlog.ok = true;
	backlog.rows = {{"consumers", 0, "chat-messages-p0", 7, 2.25}, {"consumers", 1, "chat-\"x\"", 0, 0}};
	text = RenderRelayMetrics(f, backlog);
	EXPECT_TRUE(Has(text, "chat_outbox_relay_backlog_read_ok 1")) << text;
	EXPECT_TRUE(Has(text, "chat_outbox_unsent{service=\"consumers\",partition=\"0\",queue=\"chat-messages-p0\"} 7"));
	EXPECT_TRUE(Has(text, "chat_outbox_oldest_unsent_seconds{service=\"consumers\",partition=\"0\",queue=\"chat-messages-p0\"} 2.25"));
	// label values escaped as the text format asks
	EXPECT_TRUE(Has(text, "chat_outbox_unsent{service=\"consumers\",partition=\"1\",queue=\"chat-\\\"x\\\"\"} 0")) << text;
}

TEST(RelayMetrics, RequestLine)
{
	EXPECT_EQ(MetricsRequestStatus("GET /metrics HTTP/1.1"), 200);
	EXPECT_EQ(MetricsRequestStatus("GET /metrics?x=1 HTTP/1.0"), 200);
	EXPECT_EQ(MetricsRequestStatus("HEAD /metrics HTTP/1.1"), 200);
	EXPECT_EQ(MetricsRequestStatus("POST /metrics HTTP/1.1"), 405);
	EXPECT_EQ(MetricsRequestStatus("GET / HTTP/1.1"), 404);
	EXPECT_EQ(MetricsRequestStatus("GET /metricsx HTTP/1.1"), 404);
	EXPECT_EQ(MetricsRequestStatus("GET /metrics"), 400);
	EXPECT_EQ(MetricsRequestStatus("hello"), 400);
	EXPECT_EQ(MetricsRequestStatus(""), 400);
}
