// daemon/src/base/core/config.hpp - chat-outboxd settings, from one declarative table.
//
// Every setting has one name used three ways: the flag `--redis-url`, the environment variable
// `CHAT_OUTBOXD_REDIS_URL`, and its row in docs/settings.md. Flags win over the environment, which wins
// over the default. `--help` and that page's daemon section are generated from the same table, and each
// row carries its allowed range, checked in one place (ParseConfig).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

// Where `cmake --install` puts the web client (web/); daemon/CMakeLists.txt sets it from the prefix.
#ifndef CHAT_OUTBOXD_DEFAULT_WEB_ROOT
#define CHAT_OUTBOXD_DEFAULT_WEB_ROOT "/usr/local/share/chat_outbox/web"
#endif

namespace chat_outboxd {

struct Config {
	std::string service;                 // receiving service: its inbox and send_message
	std::string queue = "chat-messages"; // BullMQ queue to consume
	std::string prefix = "bull";         // BullMQ key prefix
	std::string redis_url = "redis://127.0.0.1:6379/0";
	bool redis_cluster = false; // not a flag: main sets it when redis_url is a redis-cluster:// URL
	std::string database_url = "postgresql:///chat";
	std::string listen = "127.0.0.1:8080";
	std::string jwt_secret;
	std::string authz = "token";      // "membership": chats from chat_outbox.members, not the token
	int64_t max_member_chats = 1000;  // --authz membership: chats one socket holds, and one user's cache entry
	std::string jwt_audience;         // empty: tokens' `aud` is not checked
	std::string jwt_issuer;           // empty: tokens' `iss` is not checked
	std::string identity;             // default <service>@<hostname>, set by main
	std::string consume = "on";       // "off": a gateway only (no consumer; rows come over the bus)
	int64_t batch_size = 100;         // jobs fetched per round trip
	int64_t lock_duration = 30000;    // ms
	int64_t stalled_interval = 30000; // ms
	int64_t max_stalled_count = 1;
	int64_t inbox_stall_timeout = 10000;                  // ms the server waits for us to read a write's result
	int64_t lease_ttl = 5000;                             // ms, a partition lease's ttl (consumer/core/lease.hpp)
	int64_t stop_timeout = 10000;                         // ms a SIGTERM waits for the batch in flight (then its jobs go back)
	std::string leave_partitions;                         // partitions no chat-outboxd consumes: "2,3"
	int64_t remove_on_complete = 10000;                   // keep this many completed jobs; 0 = remove at once; -1 = keep all
	int64_t remove_on_fail = -1;                          // same for failed jobs
	int64_t ping_interval = 25000;                        // ms, Engine.IO heartbeat
	int64_t ping_timeout = 20000;                         // ms
	int64_t connect_timeout = 45000;                      // ms a Socket.IO session may take to send its CONNECT
	int64_t presence_ttl = 30000;                         // ms a presence member lives unrenewed (gateway/conversation/presence.hpp)
	int64_t presence_threshold = 100;                     // online users above which a chat's presence and typing are coalesced (gateway/conversation/core/room_events.hpp)
	int64_t presence_interval = 1000;                     // ms: at most one coalesced presence (and typing) frame per chat and interval
	int64_t upgrade_timeout = 10000;                      // ms an Engine.IO upgrade probe may take before it is dropped
	int64_t max_payload = 100000;                         // bytes, largest inbound frame / polling body
	int64_t catchup_limit = 10000;                        // messages per catch-up query; a replay pages until done
	int64_t catchup_page_bytes = 1048576;                 // body bytes per catch-up query (at least one row)
	int64_t client_queue_bytes = 4194304;                 // bytes of messages waiting for one client (then it reads from the inbox)
	int64_t max_unauthenticated = 4096;                   // Engine.IO sessions without a namespace socket, in total
	int64_t max_unauthenticated_per_address = 256;        // the same, per client IP address
	int64_t send_rate = 20;                               // client sends per second per connection (token bucket)
	int64_t send_burst = 40;                              // sends a connection may make at once before send_rate applies
	int64_t query_queue = 1000;                           // gateway queries waiting for Postgres (gateway/hub/query_queue.hpp)
	std::string cors_origins;                             // comma-separated origins allowed by CORS; "*" = any; empty = none
	std::string metrics_listen;                           // empty: /metrics on --listen; "off"; or host:port of its own
	std::string outbox_status_url;                        // empty: off; else the relay's figures on /metrics (metrics/outbox_status.hpp)
	int64_t outbox_status_interval = 5000;                // ms between two reads of the status views
	std::string web_root = CHAT_OUTBOXD_DEFAULT_WEB_ROOT; // folder served at / (the web client); "" = not served
	std::string log_level = "notice";                     // debug | verbose | notice | warning
	int64_t crash_after_inbox = 0;                        // test only: SIGKILL self after the Nth inbox commit (0 = off)
};

// kNoLimit as a row's max: no upper bound.
constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

struct ConfigOption {
	const char *name; // flag name without dashes, e.g. "redis-url"
	const char *type; // "string" | "int"
	const char *help;
	bool required;
	bool secret; // a given value never appears in errors or logs (passwords, secrets)
	// Allowed range: for an int, its smallest and largest value; for a string, its fewest bytes when
	// set (max unused). The defaults allow any value.
	int64_t min = 0;
	int64_t max = kNoLimit;
	const char *choices = nullptr; // a string's only values, separated by '|' ("debug|notice")
};

// Options lists every setting in the order --help and the docs print them.
const std::vector<ConfigOption> &Options();

// ParseConfig fills *cfg from argv then the environment (env is a list of "NAME=value").
// Returns false and sets *error on an unknown flag, a bad number, a value outside its row's range or
// a missing required setting. Sets *help when --help was given.
bool ParseConfig(const std::vector<std::string> &args, const std::vector<std::string> &env, Config *cfg, bool *help,
                 std::string *error);

std::string HelpText();
// AllowedText says a row's range as --help prints it ("1 to 5000", "100 or more", "32 bytes or more",
// "debug, verbose"); "" when any value is allowed.
std::string AllowedText(const ConfigOption &option);
std::string EnvName(const std::string &option); // "redis-url" -> "CHAT_OUTBOXD_REDIS_URL"

} // namespace chat_outboxd
