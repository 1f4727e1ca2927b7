// common/bullmq/queue_keys.cpp - see queue_keys.hpp.
#include "common/bullmq/queue_keys.hpp"

namespace chat_outbox::bullmq {

std::string
QueueKey(std::string_view prefix, std::string_view queue, std::string_view suffix)
{
	std::string k;
	k.reserve(prefix.size() + queue.size() + suffix.size() + 2);
	k.append(prefix).append(":").append(queue).append(":").append(suffix);
	return k;
}

std::string
BusChannel(std::string_view prefix, std::string_view queue)
{
	return QueueKey(prefix, queue, "bus");
}

const char kNameRule[] = "BullMQ joins and splits its keys on ':', so a prefix or queue name must be non-empty and have no ':'";

bool
IsValidName(std::string_view name) noexcept
{
	return !name.empty() && name.find(':') == std::string_view::npos;
}

std::string
NameProblem(std::string_view what, std::string_view name)
{
	if (IsValidName(name))
		return {};
	if (name.empty())
		return std::string(what) + " is empty";
	return std::string(what) + " \"" + std::string(name) + "\" contains ':'";
}

const std::vector<std::string_view> &
QueueKeyNames()
{
	static const std::vector<std::string_view> names = {
	    "active", "wait", "waiting-children", "paused", "id", "delayed", "prioritized", "stalled-check",
	    "completed", "failed", "stalled", "repeat", "limiter", "meta", "events", "pc",
	    "marker", "de", "dn", "metrics", "waiting", "delay", "priority",
	    // chat_outbox's own keys under a queue: the layout (kPartitionsKeyName, common/partitions.hpp),
	    // the relay's mark (kRelayMarkKeyName), the consumers' members registry and a partition's lease
	    kPartitionsKeyName, kRelayMarkKeyName, "members", "lease"};
	return names;
}

bool
MayNameQueueKey(std::string_view id)
{
	for (char c : id)
		if (!((c >= 'a' && c <= 'z') || c == '-'))
			return false;
	return true;
}

bool
IsQueueKeyName(std::string_view id)
{
	for (std::string_view name : QueueKeyNames())
		if (name == id)
			return true;
	return false;
}

bool
IsValidJobId(std::string_view id)
{
	if (id.empty() || id.size() > 200 || MayNameQueueKey(id))
		return false;
	bool all_digits = true;
	for (char c : id) {
		bool digit = c >= '0' && c <= '9';
		bool ok = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.';
		if (!ok)
			return false;
		all_digits = all_digits && digit;
	}
	// "-5" is integer-like too
	if (!all_digits && (id[0] == '-' || id[0] == '+') && id.size() > 1) {
		all_digits = true;
		for (size_t i = 1; i < id.size(); i++)
			all_digits = all_digits && id[i] >= '0' && id[i] <= '9';
	}
	return !all_digits;
}

} // namespace chat_outbox::bullmq
