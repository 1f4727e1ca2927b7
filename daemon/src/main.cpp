// daemon/src/main.cpp - chat-outboxd: settings, the loop, and the order things start and stop in.
//
// Start: settings (exit 2 on a bad one, before any connection) -> the daemon's one Sentinel watch
// (net/sentinel_watchers.hpp, which every connection of a redis-sentinel:// shard follows; it connects
// at its first subscriber), the gateway's Postgres and its two Redis connections on shard 0 (commands
// and PUBLISH; the chats' events channels), the gateway (Gateway) with its bus subscription, and the
// partition manager (one Redis connection per shard, and per partition it holds a BullMQ consumer with
// its own Redis and Postgres connections), all on one uv loop. With --consume off there is no
// partition manager: a gateway only. On a Redis Cluster (redis-cluster://) the one "shard" is the
// cluster: every command connection is a ClusterConn (net/cluster_conn.hpp), chosen once here through
// MakeRedisCommands.
// SIGTERM/SIGINT: every partition's consumer stops fetching and finishes its batch (inbox commit +
// complete), its lease is released and the daemon leaves the members; then the gateway closes its
// clients, then Redis and Postgres close; exit 0, whatever state the servers and the clients are in.
// Every handle of ours is a UvHandle (base/uv_handle.hpp), closed
// once by its owner; what is still open when the loop ends is closed by CloseLeftovers, through its
// owner's box, so no handle is ever closed twice. Exit 3: another live daemon holds our identity.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <uv.h>

#include "consumer/core/bullmq_identity.hpp"
#include "consumer/core/partition_calls.hpp"
#include "consumer/partition_manager.hpp"
#include "base/core/config.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "base/log.hpp"
#include "base/uv_handle.hpp"
#include "bus/bus_publisher.hpp"
#include "net/pg_client.hpp"
#include "net/redis_commands.hpp"
#include "net/redis_subscriber.hpp"
#include "net/redis_safety_check.hpp"
#include "net/sentinel_watchers.hpp"
#include "common/bullmq/queue_keys.hpp"
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"
#include "common/redis_url.hpp"
#include "gateway/gateway.hpp"
#include "metrics/outbox_status.hpp"

extern char **environ;

namespace chat_outboxd {
namespace {

constexpr int64_t kRedisTimeoutMs = 10000;

struct Daemon {
	uv_loop_t loop;
	Config cfg;
	Metrics metrics;
	BusMetrics bus_metrics;
	// first, so it outlives every connection that subscribes to it (each unsubscribes when it closes)
	std::unique_ptr<SentinelWatchers> sentinel_watch;
	std::unique_ptr<PgClient> pg_gateway;
	std::unique_ptr<RedisCommands> gateway_redis;
	std::unique_ptr<RedisSubscriber> pubsub;
	std::unique_ptr<RedisSafetyChecks> redis_safety;
	std::unique_ptr<Gateway> ws;
	std::unique_ptr<BusPublisher> publisher;
	std::unique_ptr<PartitionManager> consumer; // none with --consume off
	std::unique_ptr<PgClient> pg_status;        // --outbox-status-url: the status views' reader
	std::unique_ptr<OutboxStatus> outbox_status;
	UvSignal sigterm{"signal"}, sigint{"signal"};
	bool shutting_down = false;
	int exit_code = 0;

	void Shutdown(int code)
	{
		if (shutting_down)
			return;
		shutting_down = true;
		exit_code = code;
		Log(Level::Notice, "shutting down%s", code ? "" : ": finishing the batch in flight");
		sigterm.Close();
		sigint.Close();
		auto rest = [this] {
			ws->Shutdown([this] {
				gateway_redis->Close(nullptr);
				pubsub->Close(nullptr);
				sentinel_watch->Close(nullptr);
				pg_gateway->Close(nullptr);
				if (outbox_status)
					outbox_status->Close([this] { pg_status->Close(nullptr); });
			});
		};
		if (consumer)
			consumer->Stop(rest);
		else
			rest();
	}

	void OnSignal(int signum)
	{
		Log(Level::Notice, "received %s", signum == SIGTERM ? "SIGTERM" : "SIGINT");
		Shutdown(0);
	}
};

std::string
HostName()
{
	char buf[256] = {0};
	if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0])
		return "localhost";
	return buf;
}

int
Run(int argc, char **argv)
{
	std::vector<std::string> args(argv + 1, argv + argc), env;
	for (char **e = environ; e && *e; e++)
		env.emplace_back(*e);
	Config cfg;
	bool help = false;
	std::string error;
	if (!ParseConfig(args, env, &cfg, &help, &error)) {
		fprintf(stderr, "chat-outboxd: %s\n", error.c_str());
		return 2;
	}
	if (help) {
		fputs(HelpText().c_str(), stdout);
		return 0;
	}
	if (cfg.identity.empty())
		cfg.identity = cfg.service + "@" + HostName();
	auto parsed_shards = chat_outbox::ParseShardList(cfg.redis_url, &error);
	if (!parsed_shards) {
		fprintf(stderr, "chat-outboxd: --redis-url: %s\n", error.c_str());
		return 2;
	}
	const std::vector<chat_outbox::RedisUrl> shards = *parsed_shards;
	const std::string shard_list = chat_outbox::RedactedShardList(shards);
	std::vector<int64_t> left_out;
	if (!ParsePartitionList(cfg.leave_partitions, &left_out, &error)) {
		fprintf(stderr, "chat-outboxd: %s\n", error.c_str());
		return 2;
	}
	error = chat_outbox::bullmq::NameProblem("--prefix", cfg.prefix);
	if (error.empty())
		error = chat_outbox::bullmq::NameProblem("--queue", cfg.queue);
	if (!error.empty()) {
		fprintf(stderr, "chat-outboxd: %s (%s)\n", error.c_str(), chat_outbox::bullmq::kNameRule);
		return 2;
	}
	if (!ValidIdentity(cfg.identity, &error)) {
		fprintf(stderr, "chat-outboxd: %s\n", error.c_str());
		return 2;
	}
	// On a Redis Cluster the service's queue is named in its cluster form "{<queue>}", as the relays
	// name it (common/redis_cluster.hpp, ClusterQueueName): its members, layout and bus share one slot,
	// and each partition's queue (PartitionQueue) a slot of its own.
	if (shards.front().IsCluster()) {
		cfg.queue = chat_outbox::ClusterQueueName(cfg.queue);
		cfg.redis_cluster = true; // the chats' keys too (gateway/conversation/core/chat_keys.hpp)
	}
	SetLogLevel(cfg.log_level);
	signal(SIGPIPE, SIG_IGN);

	auto d = std::make_unique<Daemon>();
	d->cfg = cfg;
	uv_loop_init(&d->loop);
	uv_loop_t *loop = &d->loop;
	d->pg_gateway = std::make_unique<PgClient>(loop, cfg.database_url, "chat-outboxd " + cfg.service + " gateway");
	// /healthz's "postgres" is the gateway's connection: a daemon holding no partition has no other.
	Metrics *metrics = &d->metrics;
	const std::string client_name = ConnectionName(cfg.prefix, cfg.queue, cfg.identity);
	// The gateway's own Redis connections on shard 0, so they never wait behind a consumer's commands:
	// commands (presence, read mirrors, PUBLISH of the bus and the chats' events) and pub/sub (the
	// chats' events channels and the service's bus channel). The Redis safety checks read shard 0
	// through the first.
	// On a cluster the commands reach every master (presence and read mirrors live in each chat's slot)
	// and are homed on the bus channel's slot; the subscriber is on any one node (classic pub/sub
	// reaches every node: docs/architecture.md, "Redis Cluster").
	// Every connection of a redis-sentinel:// shard follows the one Sentinel watch of the daemon
	// (net/sentinel_watchers.hpp): one watch connection per set of sentinels, not one per connection.
	d->sentinel_watch = std::make_unique<SentinelWatchers>(loop, client_name, kRedisTimeoutMs);
	SentinelWatchers *watch = d->sentinel_watch.get();
	d->gateway_redis = MakeRedisCommands(loop, shards[0], chat_outbox::bullmq::BusChannel(cfg.prefix, cfg.queue), true,
	                                     "redis (gateway)", client_name + ":gateway", kRedisTimeoutMs, nullptr, watch);
	d->pubsub = std::make_unique<RedisSubscriber>(loop, shards[0], client_name + ":pubsub", kRedisTimeoutMs, watch);
	d->redis_safety = std::make_unique<RedisSafetyChecks>(d->metrics, shards.size());
	d->redis_safety->Watch(*d->gateway_redis, 0);
	d->ws = std::make_unique<Gateway>(loop, cfg, *d->pg_gateway, d->metrics, d->bus_metrics, *d->gateway_redis,
	                                  *d->pubsub);
	Gateway *gateway = d->ws.get();
	d->pg_gateway->OnStateChange([metrics, gateway](bool up) {
		metrics->postgres_up = up;
		if (up)
			gateway->PostgresUp();
	});
	if (!d->ws->Start(&error)) {
		fprintf(stderr, "chat-outboxd: %s\n", error.c_str()); // names the flag and the address
		return 2;
	}
	if (!cfg.outbox_status_url.empty()) {
		d->pg_status = std::make_unique<PgClient>(loop, cfg.outbox_status_url, "chat-outboxd " + cfg.service + " outbox status");
		d->outbox_status = std::make_unique<OutboxStatus>(loop, *d->pg_status, cfg.outbox_status_interval);
		d->ws->SetOutboxStatus(d->outbox_status.get());
	}
	const bool consume = cfg.consume == "on";
	const std::string bus_channel = chat_outbox::bullmq::BusChannel(cfg.prefix, cfg.queue);
	d->ws->StartBus(bus_channel, !consume);
	if (consume) {
		// Every partition's consumer hands its rows to the publisher, which publishes them on the bus
		// (shard 0) and hands them on to this daemon's gateway.
		d->publisher = std::make_unique<BusPublisher>(*d->gateway_redis, bus_channel, *d->ws, d->bus_metrics);
		d->consumer = std::make_unique<PartitionManager>(loop, cfg, shards, *d->publisher, d->metrics, watch);
		for (size_t i = 1; i < shards.size(); i++)
			d->redis_safety->Watch(d->consumer->ShardConn(i), i);
	}

	Daemon *daemon = d.get();
	d->sigterm.Start(loop, SIGTERM, [daemon](int sig) { daemon->OnSignal(sig); });
	d->sigint.Start(loop, SIGINT, [daemon](int sig) { daemon->OnSignal(sig); });
	Log(Level::Notice, "chat-outboxd starting: service %s, queue %s, redis %s, listen %s, identity %s",
	    cfg.service.c_str(), cfg.queue.c_str(), shard_list.c_str(), cfg.listen.c_str(), cfg.identity.c_str());
	if (std::string insecure = chat_outbox::InsecureWarning(shards); !insecure.empty())
		Log(Level::Warning, "%s", insecure.c_str());
	// Said once at start, so an operator who sees 404 at / knows why.
	if (cfg.web_root.empty())
		Log(Level::Notice, "web client: not served (--web-root is empty)");
	else if (access((cfg.web_root + "/index.html").c_str(), R_OK) == 0)
		Log(Level::Notice, "web client: serving %s at /", cfg.web_root.c_str());
	else
		Log(Level::Notice, "web client: %s/index.html is missing; / answers 404 (see --web-root)", cfg.web_root.c_str());
	d->pg_gateway->Start();
	if (d->outbox_status) {
		d->pg_status->Start();
		d->outbox_status->Start();
	}
	d->gateway_redis->Start();
	if (d->consumer) {
		d->consumer->Start([](int code) {
			// Refusing to run is not a shutdown: nothing was fetched, so there is nothing to finish.
			Log(Level::Warning, "exiting with code %d", code);
			_exit(code);
		});
	} else {
		Log(Level::Notice, "--consume off: a gateway only, showing what the other instances consume (bus %s)",
		    bus_channel.c_str());
	}

	uv_run(loop, UV_RUN_DEFAULT);
	// Whatever a component left open (it should not) is closed here so the loop can end cleanly.
	if (int left = CloseLeftovers(loop))
		Log(Level::Verbose, "closed %d handle(s) left open at exit", left);
	uv_run(loop, UV_RUN_DEFAULT);
	int rc = d->exit_code;
	Log(Level::Notice, "chat-outboxd stopped");
	if (uv_loop_close(loop) == 0)
		d.reset();
	else
		d.release(); // a handle is still referenced: leaking beats freeing memory libuv still points at
	return rc;
}

} // namespace
} // namespace chat_outboxd

int
main(int argc, char **argv)
{
	try {
		return chat_outboxd::Run(argc, argv);
	} catch (const std::exception &e) {
		fprintf(stderr, "chat-outboxd: fatal: %s\n", e.what());
		return 1;
	}
}
