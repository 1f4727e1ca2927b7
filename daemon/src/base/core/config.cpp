// daemon/src/base/core/config.cpp - the settings table and its parsers (see config.hpp).
#include "base/core/config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>

namespace chat_outboxd {

namespace {

// Field binds a table row to its member; kept beside the table so they cannot drift apart.
struct Field {
	ConfigOption option;
	std::string Config::*str;
	int64_t Config::*num;
};

const std::vector<Field> &
Fields()
{
	static const std::vector<Field> fields = {
	    {{"service", "string", "receiving service: its schema holds the inbox and send_message", true, false},
	     &Config::service, nullptr},
	    {{"queue", "string", "BullMQ queue to consume", false, false}, &Config::queue, nullptr},
	    {{"prefix", "string", "BullMQ key prefix", false, false}, &Config::prefix, nullptr},
	    {{"redis-url", "string", "redis://[[user]:password@]host[:port][/db] or unix:///path", false, true},
	     &Config::redis_url, nullptr},
	    {{"database-url", "string", "libpq connection string or URI of the chat database", false, true},
	     &Config::database_url, nullptr},
	    {{"listen", "string", "host:port for Socket.IO, /ws, /healthz and /metrics", false, false}, &Config::listen,
	     nullptr},
	    {{"jwt-secret", "string", "HS256 secret that signs client tokens", true, true}, &Config::jwt_secret, nullptr},
	    {{"identity", "string", "consumer identity, unique per live daemon; a restart with the same identity takes "
	                            "back its jobs at once, under another one (a pod with a new hostname) the stalled "
	                            "check does after --lock-duration (default <service>@<hostname>)",
	      false, false},
	     &Config::identity, nullptr},
	    {{"batch-size", "int", "jobs fetched per round trip", false, false}, nullptr, &Config::batch_size},
	    {{"lock-duration", "int", "job lock time-to-live, ms (extended every half of it)", false, false}, nullptr,
	     &Config::lock_duration},
	    {{"stalled-interval", "int", "how often the stalled-job check runs, ms", false, false}, nullptr,
	     &Config::stalled_interval},
	    {{"max-stalled-count", "int", "starts a job may lose to crashes before each new start logs a warning (a job "
	                              "is never failed for stalling)", false, false}, nullptr,
	     &Config::max_stalled_count},
	    {{"remove-on-complete", "int", "completed jobs kept (0 = remove at once, -1 = keep all)", false, false},
	     nullptr, &Config::remove_on_complete},
	    {{"remove-on-fail", "int", "failed jobs kept (0 = remove at once, -1 = keep all)", false, false}, nullptr,
	     &Config::remove_on_fail},
	    {{"ping-interval", "int", "Engine.IO ping interval, ms", false, false}, nullptr, &Config::ping_interval},
	    {{"ping-timeout", "int", "Engine.IO ping timeout, ms", false, false}, nullptr, &Config::ping_timeout},
	    {{"connect-timeout", "int", "ms a Socket.IO session may take to join the namespace (checked at pings)", false,
	      false},
	     nullptr, &Config::connect_timeout},
	    {{"upgrade-timeout", "int", "ms a WebSocket upgrade probe may take to complete (then it is dropped, polling goes on)",
	      false, false},
	     nullptr, &Config::upgrade_timeout},
	    {{"max-payload", "int", "largest inbound WebSocket message or polling body, bytes", false, false}, nullptr,
	     &Config::max_payload},
	    {{"catchup-limit", "int", "messages per catch-up query (a replay pages through everything missed)", false, false}, nullptr,
	     &Config::catchup_limit},
	    {{"log-level", "string", "debug | verbose | notice | warning", false, false}, &Config::log_level, nullptr},
	    {{"crash-after-inbox", "int", "test only: SIGKILL itself right after the Nth inbox commit (0 = off)", false,
	      false},
	     nullptr, &Config::crash_after_inbox},
	};
	return fields;
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
		*error = std::string("--") + f.option.name + " must be an integer, got '" + value + "'";
		return false;
	}
	cfg->*f.num = v;
	return true;
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
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		if (a == "--help" || a == "-h") {
			*help = true;
			return true;
		}
		if (a.rfind("--", 0) != 0) {
			*error = "unexpected argument '" + a + "'";
			return false;
		}
		std::string name = a.substr(2), value;
		size_t eq = name.find('=');
		bool inline_value = eq != std::string::npos;
		if (inline_value) {
			value = name.substr(eq + 1);
			name = name.substr(0, eq);
		}
		bool known = false;
		for (const auto &f : Fields())
			known = known || name == f.option.name;
		if (!known) {
			*error = "unknown option --" + name + " (see --help)";
			return false;
		}
		if (!inline_value) {
			if (i + 1 >= args.size()) {
				*error = "--" + name + " needs a value";
				return false;
			}
			value = args[++i];
		}
		given[name] = value;
	}
	for (const auto &f : Fields()) {
		auto it = given.find(f.option.name);
		if (it != given.end() && !Assign(f, it->second, cfg, error))
			return false;
		if (f.option.required && f.str && (cfg->*f.str).empty()) {
			*error = std::string("--") + f.option.name + " (or " + EnvName(f.option.name) + ") is required";
			return false;
		}
	}
	if (cfg->batch_size < 1 || cfg->batch_size > 5000) {
		*error = "--batch-size must be from 1 to 5000";
		return false;
	}
	if (cfg->lock_duration < 100) {
		*error = "--lock-duration must be at least 100 ms";
		return false;
	}
	if (cfg->stalled_interval < 100) {
		*error = "--stalled-interval must be at least 100 ms";
		return false;
	}
	if (cfg->ping_interval < 100 || cfg->ping_timeout < 100) {
		*error = "--ping-interval and --ping-timeout must be at least 100 ms";
		return false;
	}
	if (cfg->upgrade_timeout < 100) {
		*error = "--upgrade-timeout must be at least 100 ms";
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
		out += "  --" + std::string(f.option.name) + " <" + f.option.type + ">\n      " + f.option.help + "\n      env " +
		       EnvName(f.option.name) +
		       (f.option.required ? ", required" : (def.empty() ? "" : ", default " + def)) + "\n";
	}
	return out;
}

} // namespace chat_outboxd
