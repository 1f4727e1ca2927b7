// common/redis_script.cpp - see redis_script.hpp.
#include "common/redis_script.hpp"

#include <openssl/evp.h>

namespace chat_outbox {

std::string
ScriptSha1(std::string_view source)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_Digest(source.data(), source.size(), md, &len, EVP_sha1(), nullptr);
	static const char hex[] = "0123456789abcdef";
	std::string out;
	for (unsigned int i = 0; i < len; i++) {
		out.push_back(hex[md[i] >> 4]);
		out.push_back(hex[md[i] & 15]);
	}
	return out;
}

RedisScript
MakeRedisScript(const char *name, std::string source)
{
	std::string sha = ScriptSha1(source);
	return RedisScript{name, std::move(source), std::move(sha)};
}

namespace {

std::vector<std::string>
Argv(const char *verb, const std::string &script, const ScriptCall &call)
{
	std::vector<std::string> argv;
	argv.reserve(3 + call.keys.size() + call.args.size());
	argv.emplace_back(verb);
	argv.push_back(script);
	argv.push_back(std::to_string(call.keys.size()));
	argv.insert(argv.end(), call.keys.begin(), call.keys.end());
	argv.insert(argv.end(), call.args.begin(), call.args.end());
	return argv;
}

} // namespace

std::vector<std::string>
EvalShaArgv(const ScriptCall &call)
{
	return Argv("EVALSHA", call.script->sha1, call);
}

std::vector<std::string>
EvalArgv(const ScriptCall &call)
{
	return Argv("EVAL", call.script->source, call);
}

bool
IsNoScriptError(std::string_view error_reply) noexcept
{
	constexpr std::string_view kCode = "NOSCRIPT";
	return error_reply.substr(0, kCode.size()) == kCode &&
	       (error_reply.size() == kCode.size() || error_reply[kCode.size()] == ' ');
}

} // namespace chat_outbox
