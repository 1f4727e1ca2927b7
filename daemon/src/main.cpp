// daemon/src/main.cpp - chat-outboxd: settings, the loop, and the order things start and stop in.
//
// Start: settings (exit 2 on a bad one, before any connection) -> the gateway's Postgres, the
// gateway (Gateway) and the partition manager (one Redis connection per shard, and per partition
// it holds a BullMQ consumer with its own Redis and Postgres connections), all on one uv loop.
// SIGTERM/SIGINT: every partition's consumer stops fetching and finishes its batch (inbox commit +
// complete), its lease is released and the daemon leaves the members; then the gateway closes its
// clients, then Postgres closes; exit 0, whatever state the servers and the clients are in. Every handle of ours is a UvHandle (base/uv_handle.hpp), closed
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
#include "base/core/metrics.hpp"
#include "base/log.hpp"
#include "base/uv_handle.hpp"
#include "net/pg_client.hpp"
#include "net/redis_safety_check.hpp"
#include "bullmq/queue_keys.hpp"
#include "partitions.hpp"
#include "redis_url.hpp"
#include "gateway/gateway.hpp"

extern char **environ;

namespace chat_outboxd {
namespace {

struct Daemon {
	uv_loop_t loop;
	Config cfg;
	Metrics metrics;
	std::unique_ptr<PgClient> pg_gateway;
	std::unique_ptr<RedisSafetyCheck> redis_safety;
	std::unique_ptr<Gateway> ws;
	std::unique_ptr<PartitionManager> consumer;
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
		consumer->Stop([this] { ws->Shutdown([this] { pg_gateway->Close(nullptr); }); });
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
	std::vector<chat_outbox::RedisUrl> shards;
	std::string shard_list;
	for (const std::string &text : chat_outbox::SplitRedisUrls(cfg.redis_url)) {
		auto url = chat_outbox::ParseRedisUrl(text, &error);
		if (!url) {
			fprintf(stderr, "chat-outboxd: --redis-url: %s\n", error.c_str());
			return 2;
		}
		shard_list += (shard_list.empty() ? "" : " ") + url->Redacted();
		shards.push_back(*url);
	}
	if (shards.empty()) {
		fprintf(stderr, "chat-outboxd: --redis-url is empty\n");
		return 2;
	}
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
	SetLogLevel(cfg.log_level);
	signal(SIGPIPE, SIG_IGN);

	auto d = std::make_unique<Daemon>();
	d->cfg = cfg;
	uv_loop_init(&d->loop);
	uv_loop_t *loop = &d->loop;
	d->pg_gateway = std::make_unique<PgClient>(loop, cfg.database_url, "chat-outboxd " + cfg.service + " gateway");
	// /healthz's "postgres" is the gateway's connection: a daemon holding no partition has no other.
	Metrics *metrics = &d->metrics;
	d->pg_gateway->OnStateChange([metrics](bool up) { metrics->postgres_up = up; });
	d->ws = std::make_unique<Gateway>(loop, cfg, *d->pg_gateway, d->metrics);
	if (!d->ws->Start(&error)) {
		fprintf(stderr, "chat-outboxd: --listen %s: %s\n", cfg.listen.c_str(), error.c_str());
		return 2;
	}
	d->consumer = std::make_unique<PartitionManager>(loop, cfg, shards, *d->ws, d->metrics);
	d->redis_safety = std::make_unique<RedisSafetyCheck>(d->consumer->Shard0(), d->metrics);

	Daemon *daemon = d.get();
	d->sigterm.Start(loop, SIGTERM, [daemon](int sig) { daemon->OnSignal(sig); });
	d->sigint.Start(loop, SIGINT, [daemon](int sig) { daemon->OnSignal(sig); });
	Log(Level::Notice, "chat-outboxd starting: service %s, queue %s, redis %s, listen %s, identity %s",
	    cfg.service.c_str(), cfg.queue.c_str(), shard_list.c_str(), cfg.listen.c_str(), cfg.identity.c_str());
	// Said once at start, so an operator who sees 404 at / knows why.
	if (cfg.web_root.empty())
		Log(Level::Notice, "web client: not served (--web-root is empty)");
	else if (access((cfg.web_root + "/index.html").c_str(), R_OK) == 0)
		Log(Level::Notice, "web client: serving %s at /", cfg.web_root.c_str());
	else
		Log(Level::Notice, "web client: %s/index.html is missing; / answers 404 (see --web-root)", cfg.web_root.c_str());
	d->pg_gateway->Start();
	d->consumer->Start([](int code) {
		// Refusing to run is not a shutdown: nothing was fetched, so there is nothing to finish.
		Log(Level::Warning, "exiting with code %d", code);
		_exit(code);
	});

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
