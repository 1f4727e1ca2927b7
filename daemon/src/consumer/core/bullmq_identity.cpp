// daemon/src/consumer/core/bullmq_identity.cpp - see bullmq_identity.hpp.
#include "consumer/core/bullmq_identity.hpp"

#include <cctype>
#include <cstdio>
#include <random>
#include <sstream>

namespace chat_outboxd {

std::string
NewUuid()
{
	std::random_device rd;
	std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
	uint64_t a = gen(), b = gen();
	a = (a & ~0xF000ULL) | 0x4000ULL;                        // version 4
	b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL; // variant 10
	char buf[40];
	snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
	         static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
	         static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFULL));
	return buf;
}

bool
ValidIdentity(const std::string &identity, std::string *error)
{
	if (identity.empty() || identity.size() > 200) {
		*error = "--identity must be 1 to 200 characters";
		return false;
	}
	for (char c : identity) {
		if (c == ':' || !std::isgraph(static_cast<unsigned char>(c))) {
			*error = "--identity may not contain ':', spaces or control characters";
			return false;
		}
	}
	return true;
}

std::string
ConnectionName(const std::string &prefix, const std::string &queue, const std::string &identity)
{
	return "chat-outboxd:" + prefix + ":" + queue + ":" + identity;
}

std::vector<ClientEntry>
ParseClientList(const std::string &text)
{
	std::vector<ClientEntry> out;
	std::istringstream lines(text);
	std::string line;
	while (std::getline(lines, line)) {
		ClientEntry e;
		bool has_id = false;
		std::istringstream fields(line);
		std::string f;
		while (fields >> f) {
			if (f.rfind("id=", 0) == 0) {
				e.id = std::strtoll(f.c_str() + 3, nullptr, 10);
				has_id = true;
			} else if (f.rfind("name=", 0) == 0)
				e.name = f.substr(5);
		}
		if (has_id)
			out.push_back(e);
	}
	return out;
}

bool
IdentityClash(const std::vector<ClientEntry> &clients, const std::string &name, int64_t my_id, int64_t *other_id)
{
	for (const auto &c : clients) {
		if (c.id != my_id && c.name == name && c.id < my_id) {
			*other_id = c.id;
			return true;
		}
	}
	return false;
}

} // namespace chat_outboxd
