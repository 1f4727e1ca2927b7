// relay/src/core/relay_config.hpp - chat-outbox-relay's settings: one table, flags and environment.
//
// Each setting is the flag --<name> and the environment variable CHAT_OUTBOX_RELAY_<NAME> (upper
// case, '-' -> '_'); a flag wins over the environment, which wins over the default. --help comes
// from Options(), and managed.config_doc keeps docs/settings.md's relay section equal to it. A value outside
// its range stops the start with a message naming the setting; string values are never echoed (the
// Redis URL may hold a password).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chat_outbox::relay {

struct RelayConfig {
	std::string database_url = "postgresql:///chat"; // the chat database, as the role that ran the managed install
	std::string redis_url = "redis://127.0.0.1:6379/0";
	std::string prefix = "bull";
	int64_t batch_size = 500;           // outbox rows per batch (one claim, one Lua call)
	int64_t poll_interval = 1000;       // ms: the fallback when no notification comes
	int64_t redis_timeout = 2000;       // ms: limit for one Redis connect or batch
	int64_t redis_min_replicas = 0;     // replicas a pass's jobs must reach (WAIT) before it commits
	std::string relay_id;               // this process's row in chat_outbox.relays (default <hostname>:<pid>)
	std::string wake = "notify";        // "notify": LISTEN only; "logical": also a logical replication stream
	std::string metrics_listen = "off"; // "off", or host:port where GET /metrics answers (core/relay_metrics.hpp)
};

struct RelayOption {
	const char *name; // flag without dashes
	const char *type; // "string" | "int"
	const char *help;
	int64_t min = 0;
	int64_t max = 0; // for an int: its range
};

const std::vector<RelayOption> &Options();

// ParseRelayConfig reads args (without argv[0]) then env ("NAME=value" entries). False with *error
// on an unknown flag, a missing value, a bad number or one out of range; *help set by --help.
bool ParseRelayConfig(const std::vector<std::string> &args, const std::vector<std::string> &env, RelayConfig *cfg,
                      bool *help, std::string *error);

// Usage is the --help text: one line per setting with its environment variable and default.
std::string Usage();

// EnvName: "redis-url" -> "CHAT_OUTBOX_RELAY_REDIS_URL".
std::string EnvName(const char *name);

} // namespace chat_outbox::relay
