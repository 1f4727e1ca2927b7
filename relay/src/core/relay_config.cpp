// relay/src/core/relay_config.cpp - see relay_config.hpp.
#include "core/relay_config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "common/process/cli_flags.hpp"
#include "common/process/listen_address.hpp"

namespace chat_outbox::relay {

const std::vector<RelayOption> &
Options()
{
	static const std::vector<RelayOption> opts = {
	    {"database-url", "string", "libpq connection string or URI of the chat database (the role that ran the managed install)"},
	    {"redis-url", "string", "redis://[[user]:password@]host[:port][/db], unix:///path or redis-sentinel://[[user]:password@]host:port[,host:port...]/master[?db=N] (logged without its password); rediss://, rediss-sentinel:// and rediss-cluster:// speak TLS (?cacert=PATH&cert=PATH&key=PATH&sni=NAME, insecure=1 skips the certificate check); several, separated by spaces, are shards: partition p on shard p mod their number; or, alone, redis-cluster://[[user]:password@]host:port[,host:port...] (a Redis Cluster's seed nodes: each partition's queue {<queue>-p<p>} on the master of its hash slot)"},
	    {"prefix", "string", "BullMQ key prefix"},
	    {"batch-size", "int", "outbox rows per batch: one read of the relay's windows and one Lua call", 1, 5000},
	    {"poll-interval", "int", "ms between passes when no notification arrives (the fallback wake-up)", 10, 3600000},
	    {"redis-timeout", "int", "ms one Redis connect or batch may take before the pass is rolled back", 10, 600000},
	    {"redis-min-replicas", "int", "Redis replicas that must acknowledge a pass's jobs (WAIT) before it commits; fewer roll it back", 0, 100},
	    {"relay-id", "string", "this relay's row in chat_outbox.relays (default <hostname>:<pid>)"},
	    {"wake", "string", "notify (LISTEN) or logical (LISTEN and a logical replication stream, for chat_outbox.settings.wake = 'wal')"},
	    {"metrics-listen", "string", "off, or host:port where GET /metrics serves the relay's state, passes, connections and backlog per partition to Prometheus (e.g. 127.0.0.1:9465; docs/deploy.md, Monitoring)"},
	};
	return opts;
}

std::string
EnvName(const char *name)
{
	std::string env = "CHAT_OUTBOX_RELAY_";
	for (const char *p = name; *p; p++)
		env.push_back(*p == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*p))));
	return env;
}

namespace {

std::string *
StringField(RelayConfig *cfg, const std::string &name)
{
	if (name == "database-url")
		return &cfg->database_url;
	if (name == "redis-url")
		return &cfg->redis_url;
	if (name == "prefix")
		return &cfg->prefix;
	if (name == "relay-id")
		return &cfg->relay_id;
	if (name == "wake")
		return &cfg->wake;
	if (name == "metrics-listen")
		return &cfg->metrics_listen;
	return nullptr;
}

int64_t *
IntField(RelayConfig *cfg, const std::string &name)
{
	if (name == "batch-size")
		return &cfg->batch_size;
	if (name == "poll-interval")
		return &cfg->poll_interval;
	if (name == "redis-timeout")
		return &cfg->redis_timeout;
	if (name == "redis-min-replicas")
		return &cfg->redis_min_replicas;
	return nullptr;
}

bool
Set(RelayConfig *cfg, const RelayOption &opt, const std::string &value, const std::string &source, std::string *error)
{
	if (std::string(opt.type) == "string") {
		if (std::string(opt.name) == "wake" && value != "notify" && value != "logical") {
			*error = source + ": \"" + value + "\" is neither notify nor logical";
			return false;
		}
		std::string host;
		int port = 0;
		if (std::string(opt.name) == "metrics-listen" && value != "off" && !ParseListenAddress(value, &host, &port)) {
			*error = source + ": \"" + value + "\" is neither off nor host:port";
			return false;
		}
		*StringField(cfg, opt.name) = value;
		return true;
	}
	char *end = nullptr;
	errno = 0;
	long long v = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
	if (value.empty() || *end != '\0' || errno != 0) {
		*error = source + ": \"" + value + "\" is not a number";
		return false;
	}
	if (v < opt.min || v > opt.max) {
		*error = source + ": " + value + " is out of range (" + std::to_string(opt.min) + " to " + std::to_string(opt.max) + ")";
		return false;
	}
	*IntField(cfg, opt.name) = v;
	return true;
}

const RelayOption *
Find(const std::string &name)
{
	for (const auto &opt : Options())
		if (name == opt.name)
			return &opt;
	return nullptr;
}

} // namespace

bool
ParseRelayConfig(const std::vector<std::string> &args, const std::vector<std::string> &env, RelayConfig *cfg,
                 bool *help, std::string *error)
{
	*help = false;
	for (const auto &opt : Options()) {
		std::string key = EnvName(opt.name) + "=";
		for (const auto &e : env)
			if (e.compare(0, key.size(), key) == 0 && !Set(cfg, opt, e.substr(key.size()), EnvName(opt.name), error))
				return false;
	}
	std::vector<chat_outbox::CliFlag> flags;
	auto known = [](std::string_view name) { return Find(std::string(name)) != nullptr; };
	if (!chat_outbox::SplitFlags(args, known, &flags, help, error))
		return false;
	for (const auto &flag : flags)
		if (!Set(cfg, *Find(flag.name), flag.value, "--" + flag.name, error))
			return false;
	return true;
}

std::string
Usage()
{
	RelayConfig defaults;
	std::string out = "usage: chat-outbox-relay [--flag value]...\n"
	                  "Relays every service's outbox of a managed chat_outbox install to BullMQ (docs/managed.md).\n";
	for (const auto &opt : Options()) {
		std::string def;
		if (auto *s = StringField(&defaults, opt.name))
			def = *s;
		else
			def = std::to_string(*IntField(&defaults, opt.name));
		out += "  --" + std::string(opt.name) + " (" + EnvName(opt.name) + ")";
		if (!def.empty())
			out += " [" + def + "]";
		if (std::string(opt.type) == "int")
			out += " {" + std::to_string(opt.min) + ".." + std::to_string(opt.max) + "}";
		out += "\n      " + std::string(opt.help) + "\n";
	}
	return out;
}

} // namespace chat_outbox::relay
