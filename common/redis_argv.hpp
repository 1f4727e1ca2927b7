// common/redis_argv.hpp - RedisArgv: a command's words as hiredis's *CommandArgv functions take them
// (a count, pointers and lengths), without copying the words: it borrows them, so it must not
// outlive the vector it was made from. Used by the blocking and the libuv clients alike.
#pragma once

#include <string>
#include <vector>

namespace chat_outbox {

struct RedisArgv {
	explicit RedisArgv(const std::vector<std::string> &words)
	{
		ptrs.reserve(words.size());
		lens.reserve(words.size());
		for (const auto &w : words) {
			ptrs.push_back(w.data());
			lens.push_back(w.size());
		}
	}
	int Count() const { return static_cast<int>(ptrs.size()); }

	std::vector<const char *> ptrs;
	std::vector<size_t> lens;
};

} // namespace chat_outbox
