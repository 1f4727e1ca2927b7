// common/redis_script.hpp - a Lua script as Redis runs it, shared by the relay and the daemon.
//
// Redis names a script by the SHA-1 of its text (EVALSHA <sha>); a Redis that restarted without
// the script, or whose scripts were flushed, answers NOSCRIPT, and the client sends the text again
// (EVAL, or SCRIPT LOAD then EVALSHA). These are the rules both clients keep; how they send the
// commands (hiredis on libuv, a blocking socket on the bgworker's latch) is their own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox {

struct RedisScript {
	const char *name;   // for logs
	std::string source; // the Lua text
	std::string sha1;   // lowercase hex SHA-1 of source: what SCRIPT LOAD answers and EVALSHA takes
};

// MakeRedisScript computes the script's sha1 from its source.
RedisScript MakeRedisScript(const char *name, std::string source);
// ScriptSha1 is the lowercase hex SHA-1 Redis names a script text by.
std::string ScriptSha1(std::string_view source);

// ScriptCall is one run of a script: its keys (KEYS) and arguments (ARGV).
struct ScriptCall {
	const RedisScript *script = nullptr;
	std::vector<std::string> keys;
	std::vector<std::string> args;
};

// EvalShaArgv is EVALSHA <sha1> <numkeys> keys... args...; EvalArgv is the same with EVAL and the
// script's text, for the retry after NOSCRIPT.
std::vector<std::string> EvalShaArgv(const ScriptCall &call);
std::vector<std::string> EvalArgv(const ScriptCall &call);

// IsNoScriptError tells whether an error reply means Redis does not have the script: the reply
// starts with the NOSCRIPT error code. Then, and only then, the text is sent again; any other
// error (a failing script, OOM, NOPERM) is the call's answer.
// noexcept, so a caller outside C++'s exception handling (the relay's C-style code) may call it directly.
bool IsNoScriptError(std::string_view error_reply) noexcept;

} // namespace chat_outbox
