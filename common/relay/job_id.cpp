// common/relay/job_id.cpp - job id choice (see job_id.hpp).
#include "common/relay/job_id.hpp"

#include "common/bullmq/queue_keys.hpp"

#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

std::string
ChooseJobId(const char *payload_id, std::string_view service, int64_t outbox_id)
{
	if (payload_id && bullmq::IsValidJobId(payload_id))
		return payload_id;
	std::string id = "outbox-";
	id.append(service.data(), service.size());
	id.push_back('-');
	id.append(std::to_string(outbox_id));
	return id;
}

} // namespace chat_outbox
