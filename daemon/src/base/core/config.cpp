// daemon/src/base/core/config.cpp - the settings table and its parsers (see config.hpp).
#include "base/core/config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "common/process/cli_flags.hpp"

namespace chat_outboxd {

namespace {

// Every duration fits a JavaScript timer (setTimeout holds at most 2^31-1 ms, about 24.8 days, and
// fires at once above that): Socket.IO clients arm theirs from --ping-interval and --ping-timeout,
// and one bound for every duration is simpler to state.
constexpr int64_t kMaxMs = 2147483647;
// Below 100 ms a lock, heartbeat or deadline expires under ordinary scheduling delays.
constexpr int64_t kMinMs = 100;
// HS256 needs a key at least as long as its hash, 32 bytes (RFC 7518 3.2): a shorter one makes
// forging a signature by guessing the key cheaper.
constexpr int64_t kMinSecretBytes = 32;
// A client's first frames (the Socket.IO CONNECT with its token) must fit in --max-payload.
constexpr int64_t kMinPayload = 1024;

// Field binds a table row to its member; kept beside the table so they cannot drift apart.
struct Field {
	ConfigOption option;
	std::string Config::*str;
	int64_t Config::*num;
};

const std::vector<Field> &
Fields()
{
	// clang-format off: one flag a row, its description broken where it reads best
	static const std::vector<Field> fields = {
	    {{"service", "string", "receiving service: its schema holds the inbox and send_message", true, false},
	     &Config::service,
	     nullptr},
	    {{"queue", "string", "BullMQ queue to consume", false, false}, &Config::queue, nullptr},
	    {{"prefix", "string", "BullMQ key prefix", false, false}, &Config::prefix, nullptr},
	    {{"redis-url", "string",
	      "redis://[[user]:password@]host[:port][/db], unix:///path or "
	      "redis-sentinel://[[user]:password@]host:port[,host:port...]/master[?db=N]; rediss://, rediss-sentinel:// "
	      "and rediss-cluster:// speak TLS (?cacert=PATH&cert=PATH&key=PATH&sni=NAME, insecure=1 skips the certificate check); several, separated by spaces, "
	      "are shards: partition p lives on the (p mod count)-th, counted from 0 (the same list, in the same order, as "
	      "the relay's); or, alone, redis-cluster://[[user]:password@]host:port[,host:port...] (a Redis Cluster's seed "
	      "nodes: the queue is {<queue>}, each partition's {<queue>-p<p>} on the master of its hash slot)",
	      false, true},
	     &Config::redis_url,
	     nullptr},
	    {{"database-url", "string", "libpq connection string or URI of the chat database", false, true},
	     &Config::database_url,
	     nullptr},
	    {{"listen", "string", "host:port for Socket.IO, /ws, /healthz, /metrics and the web client", false, false},
	     &Config::listen,
	     nullptr},
	    {{"jwt-secret", "string", "HS256 secret that signs client tokens", true, true, kMinSecretBytes, kNoLimit},
	     &Config::jwt_secret,
	     nullptr},
	    {{"authz", "string",
	      "who may see a chat: token (the token's chats claim) or membership (chat_outbox.members, changes "
	      "applied live; the token needs sub and exp, a chats claim further restricts)",
	      false, false, 0, kNoLimit, "token|membership"},
	     &Config::authz,
	     nullptr},
	    {{"max-member-chats", "int",
	      "with --authz membership, the most chats one socket holds and one user's cached membership keeps: a "
	      "user in more gets the first ones by chat id and the chats_cut event, and joins the others one by one "
	      "in places freed by leave",
	      false, false, 1, kNoLimit},
	     nullptr,
	     &Config::max_member_chats},
	    {{"jwt-audience", "string",
	      "when set, a client token's aud (a string or an array of strings) must contain this value", false, false},
	     &Config::jwt_audience,
	     nullptr},
	    {{"jwt-issuer", "string", "when set, a client token's iss must be exactly this value", false, false},
	     &Config::jwt_issuer,
	     nullptr},
	    {{"identity", "string", "consumer identity, unique per live daemon: its name among the service's consumers "
	                            "and, with a token drawn by each process, in its partition leases; a restarted "
	                            "daemon, under this identity or another (a pod with a new hostname), takes its "
	                            "predecessor's partitions and jobs over once the leases expire (--lease-ttl) "
	                            "(default <service>@<hostname>)",
	      false, false},
	     &Config::identity,
	     nullptr},
	    {{"consume", "string", "off: run as a gateway only, consuming no jobs; its clients are shown what the "
	                           "other instances of the service consume, over the bus",
	      false, false, 0, kNoLimit, "on|off"},
	     &Config::consume,
	     nullptr},
	    {{"batch-size", "int", "jobs fetched per round trip", false, false, 1, 5000}, nullptr, &Config::batch_size},
	    {{"lock-duration", "int", "job lock time-to-live, ms (extended every half of it)", false, false, kMinMs,
	      kMaxMs},
	     nullptr,
	     &Config::lock_duration},
	    {{"stalled-interval", "int", "how often the stalled-job check runs, ms", false, false, kMinMs, kMaxMs},
	     nullptr,
	     &Config::stalled_interval},
	    {{"max-stalled-count", "int", "starts a job may lose to crashes before each new start logs a warning (a job "
	                                  "is never failed for stalling)",
	      false, false, 0, kNoLimit},
	     nullptr,
	     &Config::max_stalled_count},
	    {{"inbox-stall-timeout", "int",
	      "ms Postgres waits for this daemon to read an inbox write's result before it drops the connection "
	      "(tcp_user_timeout, over TCP): a daemon that stops (frozen, a paused VM) holds the service's inbox "
	      "lock about this long at most; its write rolls back and is written again",
	      false, false, kMinMs, kMaxMs},
	     nullptr,
	     &Config::inbox_stall_timeout},
	    {{"lease-ttl", "int",
	      "partition lease time-to-live, ms: renewed every third of it; a dead consumer's partitions are taken "
	      "over within about 4/3 of it",
	      false, false, 300, kMaxMs},
	     nullptr,
	     &Config::lease_ttl},
	    {{"stop-timeout", "int",
	      "ms a SIGTERM waits for the batch in flight when Redis or Postgres does not answer; then the daemon "
	      "stops without it and a restart takes its jobs back (keep it under the service manager's stop timeout)",
	      false, false, 100, kMaxMs},
	     nullptr,
	     &Config::stop_timeout},
	    {{"leave-partitions", "string",
	      "partitions no chat-outboxd of the service consumes (left to another consumer, e.g. a bullmq Worker), "
	      "separated by ',' or spaces; give every daemon of the service the same list",
	      false, false},
	     &Config::leave_partitions,
	     nullptr},
	    {{"remove-on-complete", "int", "completed jobs kept (0 = remove at once, -1 = keep all)", false, false, -1,
	      kNoLimit},
	     nullptr,
	     &Config::remove_on_complete},
	    {{"remove-on-fail", "int", "failed jobs kept (0 = remove at once, -1 = keep all)", false, false, -1, kNoLimit},
	     nullptr,
	     &Config::remove_on_fail},
	    {{"ping-interval", "int", "Engine.IO ping interval, ms", false, false, kMinMs, kMaxMs}, nullptr, &Config::ping_interval},
	    {{"ping-timeout", "int", "Engine.IO ping timeout, ms", false, false, kMinMs, kMaxMs}, nullptr, &Config::ping_timeout},
	    {{"connect-timeout", "int", "ms a Socket.IO session may take to join the namespace (checked at pings)", false,
	      false, kMinMs, kMaxMs},
	     nullptr,
	     &Config::connect_timeout},
	    {{"presence-ttl", "int",
	      "ms a client stays in its chats' presence after its gateway last renewed it: renewed every third of "
	      "it, so the clients of a killed gateway leave presence within about this long",
	      false, false, 3000, kMaxMs / 2},
	     nullptr,
	     &Config::presence_ttl},
	    {{"presence-threshold", "int",
	      "online users of a chat above which its presence is a count, a page of users and coalesced changes (one "
	      "frame per --presence-interval), and its typing is coalesced the same way; chat_state lists at most this "
	      "many users",
	      false, false, 1, 100000},
	     nullptr,
	     &Config::presence_threshold},
	    {{"presence-interval", "int",
	      "ms between a chat's coalesced presence and typing frames (a small chat's changes beyond a burst of 8 "
	      "an interval wait for it too)",
	      false, false, 100, 60000},
	     nullptr,
	     &Config::presence_interval},
	    {{"upgrade-timeout", "int",
	      "ms a WebSocket upgrade probe may take to complete (then it is dropped, polling goes on)", false, false,
	      kMinMs, kMaxMs},
	     nullptr,
	     &Config::upgrade_timeout},
	    {{"max-payload", "int", "largest inbound WebSocket message or polling body, bytes", false, false, kMinPayload,
	      kNoLimit},
	     nullptr,
	     &Config::max_payload},
	    {{"catchup-limit", "int", "messages per catch-up query (a replay pages through everything missed)", false,
	      false, 1, kNoLimit},
	     nullptr,
	     &Config::catchup_limit},
	    {{"catchup-page-bytes", "int", "body bytes per catch-up query (a page holds at least one row; at most "
	                                   "half of --client-queue-bytes)",
	      false, false, 1024, kNoLimit},
	     nullptr,
	     &Config::catchup_page_bytes},
	    {{"client-queue-bytes", "int", "bytes of messages waiting for one client; a client further behind reads on from "
	                                   "the inbox",
	      false, false, 2048, kNoLimit},
	     nullptr,
	     &Config::client_queue_bytes},
	    {{"max-unauthenticated", "int", "Engine.IO sessions without a joined namespace, in total (more get 429)", false,
	      false, 1, kNoLimit},
	     nullptr,
	     &Config::max_unauthenticated},
	    {{"max-unauthenticated-per-address", "int", "the same, per client IP address", false, false, 1, kNoLimit},
	     nullptr,
	     &Config::max_unauthenticated_per_address},
	    {{"send-rate", "int", "client sends per second per connection (more are acked rate_limited)", false, false, 1,
	      kNoLimit},
	     nullptr,
	     &Config::send_rate},
	    {{"send-burst", "int", "client sends a connection may make at once before --send-rate applies", false, false,
	      1, kNoLimit},
	     nullptr,
	     &Config::send_burst},
	    {{"query-queue", "int", "gateway queries (catch-up pages, sends, history, joins' chat_state lookups) waiting "
	                            "for Postgres; a send beyond it is acked busy, a catch-up page waits, a join past "
	                            "half of it gets chat_state without unread",
	      false, false, 1, kNoLimit},
	     nullptr,
	     &Config::query_queue},
	    {{"cors-origins", "string", "comma-separated origins allowed to poll /socket.io/ from a browser (\"*\" = any; "
	                                "empty = no CORS headers)",
	      false, false},
	     &Config::cors_origins,
	     nullptr},
	    {{"metrics-listen", "string", "where /metrics is served: empty = on --listen, \"off\", or its own host:port",
	      false, false},
	     &Config::metrics_listen,
	     nullptr},
	    {{"outbox-status-url", "string",
	      "libpq URI of a role that may read chat_outbox.status and partition_status (every service's outbox: "
	      "the database owner, or a monitoring role granted that); set, /metrics shows the relay's state and "
	      "each partition's backlog, for the extension's relay, which has no /metrics of its own; empty = off",
	      false, true},
	     &Config::outbox_status_url,
	     nullptr},
	    {{"outbox-status-interval", "int",
	      "ms between two reads of the status views for /metrics (--outbox-status-url): one statement each, "
	      "whatever the scrapes",
	      false, false, 100, kMaxMs},
	     nullptr,
	     &Config::outbox_status_interval},
	    {{"web-root", "string", "folder whose files (the web client) are served at / by GET; empty = none", false, false},
	     &Config::web_root,
	     nullptr},
	    {{"log-level", "string", "messages at this level and more severe are logged", false, false, 0, kNoLimit,
	      "debug|verbose|notice|warning"},
	     &Config::log_level,
	     nullptr},
	    {{"crash-after-inbox", "int", "test only: SIGKILL itself right after the Nth inbox commit (0 = off)", false,
	      false, 0, kNoLimit},
	     nullptr,
	     &Config::crash_after_inbox},
	};
	// clang-format on
	return fields;
}

std::vector<std::string>
Choices(const ConfigOption &o)
{
	std::vector<std::string> out;
	for (const char *p = o.choices; p && *p;) {
		const char *bar = std::strchr(p, '|');
		out.emplace_back(p, bar ? bar : p + std::strlen(p));
		p = bar ? bar + 1 : "";
	}
	return out;
}

bool
Assign(const Field &f, const std::string &value, Config *cfg, std::string *error)
{
	if (f.str) {
		cfg->*f.str = value;
		return true;
	}
	char *end = nullptr;
	errno = 0;
	long long v = std::strtoll(value.c_str(), &end, 10);
	if (value.empty() || *end != '\0' || errno == ERANGE) {
		*error = std::string("--") + f.option.name + " must be an integer" +
		         (f.option.secret ? "" : ", got '" + value + "'");
		return false;
	}
	cfg->*f.num = v;
	return true;
}

// InRange checks the row's range against the value the setting ended with (given or default). An
// unset optional string (empty) has no length to check; a string with choices must be one of them.
// A secret's value is never quoted.
bool
InRange(const Field &f, const Config &cfg, std::string *error)
{
	const ConfigOption &o = f.option;
	std::string got;
	if (f.num) {
		int64_t v = cfg.*f.num;
		if (v >= o.min && v <= o.max)
			return true;
		got = std::to_string(v);
	} else {
		const std::string &s = cfg.*f.str;
		bool chosen = !o.choices;
		for (const std::string &c : Choices(o))
			chosen = chosen || s == c;
		if ((s.empty() && !o.choices) || (static_cast<int64_t>(s.size()) >= o.min && chosen))
			return true;
		got = o.choices ? "'" + s + "'" : std::to_string(s.size()) + " bytes";
	}
	*error = std::string("--") + o.name + " must be " +
	         (o.choices ? "one of " : f.num && o.max != kNoLimit ? "from "
	                                                             : "") +
	         AllowedText(o) +
	         (o.secret ? "" : ", got " + got);
	return false;
}

} // namespace

std::string
EnvName(const std::string &option)
{
	std::string out = "CHAT_OUTBOXD_";
	for (char c : option)
		out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
	return out;
}

const std::vector<ConfigOption> &
Options()
{
	static const std::vector<ConfigOption> options = [] {
		std::vector<ConfigOption> o;
		for (const auto &f : Fields())
			o.push_back(f.option);
		return o;
	}();
	return options;
}

bool
ParseConfig(const std::vector<std::string> &args, const std::vector<std::string> &env, Config *cfg, bool *help,
            std::string *error)
{
	*help = false;
	std::map<std::string, std::string> given;
	for (const auto &kv : env) {
		size_t eq = kv.find('=');
		if (eq == std::string::npos)
			continue;
		for (const auto &f : Fields())
			if (kv.compare(0, eq, EnvName(f.option.name)) == 0 && eq == EnvName(f.option.name).size())
				given[f.option.name] = kv.substr(eq + 1);
	}
	std::vector<chat_outbox::CliFlag> flags;
	auto known = [](std::string_view name) {
		for (const auto &f : Fields())
			if (name == f.option.name)
				return true;
		return false;
	};
	if (!chat_outbox::SplitFlags(args, known, &flags, help, error))
		return false;
	if (*help)
		return true;
	for (auto &flag : flags) // flags win over the environment; a later flag over an earlier one
		given[flag.name] = std::move(flag.value);
	for (const auto &f : Fields()) {
		auto it = given.find(f.option.name);
		if (it != given.end() && !Assign(f, it->second, cfg, error))
			return false;
		if (f.option.required && f.str && (cfg->*f.str).empty()) {
			*error = std::string("--") + f.option.name + " (or " + EnvName(f.option.name) + ") is required";
			return false;
		}
		if (!InRange(f, *cfg, error))
			return false;
	}
	// The one rule between two rows: a catch-up page must fit twice in a client's queue budget.
	if (cfg->client_queue_bytes < 2 * cfg->catchup_page_bytes) {
		*error = "--client-queue-bytes must be at least twice --catchup-page-bytes";
		return false;
	}
	return true;
}

std::string
HelpText()
{
	std::string out = "usage: chat-outboxd --service NAME --jwt-secret SECRET [options]\n\n"
	                  "Consumes a BullMQ queue, writes the service's inbox and pushes new messages to\n"
	                  "Socket.IO / WebSocket clients. Every option can also be set in the environment.\n\n";
	Config defaults;
	for (const auto &f : Fields()) {
		std::string def = f.str ? defaults.*f.str : std::to_string(defaults.*f.num);
		std::string allowed = AllowedText(f.option);
		out += "  --" + std::string(f.option.name) + " <" + f.option.type + ">\n      " + f.option.help + "\n      env " +
		       EnvName(f.option.name) +
		       (f.option.required ? ", required" : (def.empty() ? "" : ", default " + def)) + "\n" +
		       (allowed.empty() ? "" : "      allowed " + allowed + "\n");
	}
	return out;
}

std::string
AllowedText(const ConfigOption &o)
{
	if (o.choices) {
		std::string out;
		for (const std::string &c : Choices(o))
			out += (out.empty() ? "" : ", ") + c;
		return out;
	}
	if (std::string(o.type) != "int")
		return o.min > 0 ? std::to_string(o.min) + " bytes or more" : "";
	if (o.max == kNoLimit)
		return std::to_string(o.min) + " or more";
	return std::to_string(o.min) + " to " + std::to_string(o.max);
}

} // namespace chat_outboxd
