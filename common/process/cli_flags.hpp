// common/process/cli_flags.hpp - the command line of our programs (chat-outboxd, chat-outbox-relay): flags only,
// each `--name value` or `--name=value`; `--help` / `-h` asks for the usage. Each program keeps its own
// table of names, defaults and ranges; this is the one reader of argv they share.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace chat_outbox {

struct CliFlag {
	std::string name; // without the leading "--"
	std::string value;
};

// SplitFlags reads args (argv without the program name) into flags, in the order given. known(name)
// tells whether a flag exists. It stops at --help or -h with *help = true. Returns false and sets
// *error on an argument that is not a flag, an unknown flag, or a flag without a value.
bool SplitFlags(const std::vector<std::string> &args, const std::function<bool(std::string_view)> &known,
                std::vector<CliFlag> *out, bool *help, std::string *error);

} // namespace chat_outbox
