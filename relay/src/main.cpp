// relay/src/main.cpp - chat-outbox-relay: the relay as a process, for a managed install
// (sql/managed/chat_outbox_managed.sql) on a Postgres that cannot load our library.
//
// Wiring only: read the settings (core/relay_config.hpp), install the stop signals, start the
// /metrics thread when asked (metrics_server.hpp), and run the rounds (relay_loop.hpp) until SIGTERM
// or SIGINT, which finish the pass in progress and exit 0. A bad setting exits 2 before anything starts.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/partitions.hpp"
#include "core/relay_config.hpp"
#include "metrics_server.hpp"
#include "relay_loop.hpp"

namespace {

volatile std::sig_atomic_t stop_requested = 0;

void
OnStop(int)
{
	stop_requested = 1;
}

} // namespace

int
main(int argc, char **argv)
{
	using namespace chat_outbox;
	using namespace chat_outbox::relay;

	std::vector<std::string> args(argv + 1, argv + argc), env;
	for (char **e = environ; *e; e++)
		env.emplace_back(*e);
	RelayConfig cfg;
	bool help = false;
	std::string error;
	if (!ParseRelayConfig(args, env, &cfg, &help, &error)) {
		std::fprintf(stderr, "chat-outbox-relay: %s\n%s", error.c_str(), Usage().c_str());
		return 2;
	}
	if (help) {
		std::fputs(Usage().c_str(), stdout);
		return 0;
	}
	auto urls = ParseShardList(cfg.redis_url, &error);
	if (!urls) {
		std::fprintf(stderr, "chat-outbox-relay: --redis-url: %s\n", error.c_str());
		return 2;
	}
	if (cfg.prefix.empty() || cfg.prefix.find(':') != std::string::npos) {
		std::fprintf(stderr, "chat-outbox-relay: --prefix must be non-empty and contain no ':'\n");
		return 2;
	}
	if (cfg.relay_id.empty()) {
		char host[256] = "";
		gethostname(host, sizeof host - 1);
		cfg.relay_id = std::string(host) + ":" + std::to_string(getpid());
	}
	struct sigaction sa = {};
	sa.sa_handler = OnStop; // no SA_RESTART: a wait returns at once
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	signal(SIGPIPE, SIG_IGN);

	std::unique_ptr<MetricsServer> metrics;
	if (cfg.metrics_listen != "off") {
		metrics = std::make_unique<MetricsServer>(cfg.database_url);
		if (!metrics->Start(cfg.metrics_listen, &error)) {
			std::fprintf(stderr, "chat-outbox-relay: --metrics-listen: %s\n", error.c_str());
			return 2;
		}
	}
	RelayLoop(cfg, *urls, metrics.get(), &stop_requested).Run();
	return 0;
}
