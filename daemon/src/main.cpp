// daemon/src/main.cpp - chat-outboxd: settings, the loop, and the order things start and stop in.
//
// Start: settings (exit 2 on a bad one, before any connection) -> Postgres x2, Redis x2 for the
// consumer and x2 for the gateway (commands, and the chats' events channels), the gateway (Gateway)
// and the consumer, all on one uv loop.
// SIGTERM/SIGINT: the consumer stops fetching and finishes its batch (inbox commit + complete),
// then the gateway closes its clients, then Redis and Postgres close; exit 0, whatever state the
// servers and the clients are in. Every handle of ours is a UvHandle (base/uv_handle.hpp), closed
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

#include "consumer/bullmq_consumer.hpp"
#include "consumer/bus_publisher.hpp"
#include "consumer/core/bullmq_identity.hpp"
#include "base/core/config.hpp"
#include "base/core/metrics.hpp"
#include "base/log.hpp"
#include "base/uv_handle.hpp"
#include "net/pg_client.hpp"
#include "net/redis_conn.hpp"
#include "net/redis_subscriber.hpp"
#include "net/redis_safety_check.hpp"
#include "bullmq/queue_keys.hpp"
#include "redis_url.hpp"
#include "gateway/gateway.hpp"

extern char **environ;

namespace chat_outboxd {
namespace {

constexpr int64_t kRedisTimeoutMs = 10000;

struct Daemon {
	uv_loop_t loop;
	Config cfg;
	Metrics metrics;
	StateLog redis_log{"redis"};
	std::unique_ptr<PgClient> pg_inbox, pg_gateway;
	std::unique_ptr<RedisConn> cmd, blocking, gateway_redis;
	std::unique_ptr<RedisSubscriber> chat_events;
	std::unique_ptr<RedisSafetyCheck> redis_safety;
	std::unique_ptr<Gateway> ws;
	std::unique_ptr<BusPublisher> publisher;
	std::unique_ptr<BullmqConsumer> consumer; // none with --consume off
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
				cmd->Close(nullptr);
				gateway_redis->Close(nullptr);
				chat_events->Close(nullptr);
				blocking->Close(nullptr);
				pg_inbox->Close(nullptr);
				pg_gateway->Close(nullptr);
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
	auto url = chat_outbox::ParseRedisUrl(cfg.redis_url, &error);
	if (!url) {
		fprintf(stderr, "chat-outboxd: --redis-url: %s\n", error.c_str());
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
	d->pg_inbox = std::make_unique<PgClient>(loop, cfg.database_url, "chat-outboxd " + cfg.service + " inbox");
	d->pg_gateway = std::make_unique<PgClient>(loop, cfg.database_url, "chat-outboxd " + cfg.service + " gateway");
	d->cmd = std::make_unique<RedisConn>(loop, *url, "redis (commands)",
	                                     ConnectionName(cfg.prefix, cfg.queue, cfg.identity), kRedisTimeoutMs,
	                                     &d->redis_log);
	d->blocking = std::make_unique<RedisConn>(loop, *url, "redis (blocking)",
	                                          ConnectionName(cfg.prefix, cfg.queue, cfg.identity) + ":blocking",
	                                          kRedisTimeoutMs, nullptr);
	d->redis_safety = std::make_unique<RedisSafetyCheck>(*d->cmd, d->metrics);
	// The gateway's own Redis connections: commands (presence, read mirrors, PUBLISH) and the chats'
	// events channels, so conversation events never wait behind the consumer's commands.
	d->gateway_redis = std::make_unique<RedisConn>(loop, *url, "redis (gateway)",
	                                               ConnectionName(cfg.prefix, cfg.queue, cfg.identity) + ":gateway",
	                                               kRedisTimeoutMs, nullptr);
	d->chat_events = std::make_unique<RedisSubscriber>(loop, *url, ConnectionName(cfg.prefix, cfg.queue, cfg.identity) + ":events",
	                                           kRedisTimeoutMs);
	d->ws = std::make_unique<Gateway>(loop, cfg, *d->pg_gateway, d->metrics, *d->gateway_redis, *d->chat_events);
	if (!d->ws->Start(&error)) {
		fprintf(stderr, "chat-outboxd: --listen %s: %s\n", cfg.listen.c_str(), error.c_str());
		return 2;
	}
	const bool consume = cfg.consume == "on";
	const std::string client_name = ConnectionName(cfg.prefix, cfg.queue, cfg.identity);
	d->ws->StartBus({*url}, chat_outbox::bullmq::BusChannel(cfg.prefix, cfg.queue), client_name + ":bus", !consume);
	if (consume) {
		// The consumer hands its rows to the publisher, which publishes them on the bus and hands them on
		// to this daemon's gateway.
		d->publisher = std::make_unique<BusPublisher>(*d->cmd, chat_outbox::bullmq::BusChannel(cfg.prefix, cfg.queue),
		                                              *d->ws, d->metrics);
		d->consumer = std::make_unique<BullmqConsumer>(loop, cfg, *d->cmd, *d->blocking, *d->pg_inbox, *d->publisher,
		                                               d->metrics);
	}

	Daemon *daemon = d.get();
	d->sigterm.Start(loop, SIGTERM, [daemon](int sig) { daemon->OnSignal(sig); });
	d->sigint.Start(loop, SIGINT, [daemon](int sig) { daemon->OnSignal(sig); });
	Log(Level::Notice, "chat-outboxd starting: service %s, queue %s, redis %s, listen %s, identity %s",
	    cfg.service.c_str(), cfg.queue.c_str(), url->Redacted().c_str(), cfg.listen.c_str(), cfg.identity.c_str());
	// Said once at start, so an operator who sees 404 at / knows why.
	if (cfg.web_root.empty())
		Log(Level::Notice, "web client: not served (--web-root is empty)");
	else if (access((cfg.web_root + "/index.html").c_str(), R_OK) == 0)
		Log(Level::Notice, "web client: serving %s at /", cfg.web_root.c_str());
	else
		Log(Level::Notice, "web client: %s/index.html is missing; / answers 404 (see --web-root)", cfg.web_root.c_str());
	d->pg_gateway->Start();
	d->gateway_redis->Start();
	if (d->consumer) {
		d->consumer->Start([](int code) {
			// Refusing to run is not a shutdown: nothing was fetched, so there is nothing to finish.
			Log(Level::Warning, "exiting with code %d", code);
			_exit(code);
		});
	} else {
		Log(Level::Notice, "--consume off: a gateway only, showing what the other instances consume (bus %s)",
		    chat_outbox::bullmq::BusChannel(cfg.prefix, cfg.queue).c_str());
		Metrics *m = &d->metrics;
		d->pg_gateway->OnStateChange([m](bool up) { m->postgres_up = up; });
		d->cmd->Start(); // for Redis' durability settings in /healthz and /metrics; nothing else uses it here
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
