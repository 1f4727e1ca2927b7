// extension/src/core/job_id.cpp - job id validation (see job_id.hpp).
#include "core/job_id.hpp"

#include "core/cpp_only.hpp"

namespace chat_outbox {

bool
IsValidJobId(std::string_view id)
{
	if (id.empty() || id.size() > 200)
		return false;
	bool all_digits = true;
	for (char c : id) {
		bool digit = c >= '0' && c <= '9';
		bool ok = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.';
		if (!ok)
			return false;
		all_digits = all_digits && digit;
	}
	// "-5" is integer-like too: BullMQ parses ids with parseInt in places.
	if (!all_digits && (id[0] == '-' || id[0] == '+') && id.size() > 1) {
		all_digits = true;
		for (size_t i = 1; i < id.size(); i++)
			all_digits = all_digits && id[i] >= '0' && id[i] <= '9';
	}
	return !all_digits;
}

std::string
ChooseJobId(const char *payload_id, std::string_view service, int64_t outbox_id)
{
	if (payload_id && IsValidJobId(payload_id))
		return payload_id;
	std::string id = "outbox-";
	id.append(service.data(), service.size());
	id.push_back('-');
	id.append(std::to_string(outbox_id));
	return id;
}

} // namespace chat_outbox
