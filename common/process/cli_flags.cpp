// common/process/cli_flags.cpp - see cli_flags.hpp.
#include "common/process/cli_flags.hpp"

namespace chat_outbox {

bool
SplitFlags(const std::vector<std::string> &args, const std::function<bool(std::string_view)> &known,
           std::vector<CliFlag> *out, bool *help, std::string *error)
{
	*help = false;
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
		CliFlag flag{a.substr(2), ""};
		size_t eq = flag.name.find('=');
		bool inline_value = eq != std::string::npos;
		if (inline_value) {
			flag.value = flag.name.substr(eq + 1);
			flag.name.resize(eq);
		}
		if (!known(flag.name)) {
			*error = "unknown option --" + flag.name + " (see --help)";
			return false;
		}
		if (!inline_value) {
			if (i + 1 >= args.size()) {
				*error = "--" + flag.name + " needs a value";
				return false;
			}
			flag.value = args[++i];
		}
		out->push_back(std::move(flag));
	}
	return true;
}

} // namespace chat_outbox
