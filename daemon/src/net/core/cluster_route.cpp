// daemon/src/net/core/cluster_route.cpp - see cluster_route.hpp.
#include "net/core/cluster_route.hpp"

#include <algorithm>
#include <cctype>

namespace chat_outboxd {

namespace {

std::string
Upper(std::string s)
{
	std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
	return s;
}

// The commands the daemon sends that name no key: they go to the owner's home slot.
bool
Keyless(const std::string &name)
{
	static const char *const kKeyless[] = {"PUBLISH", "CLIENT", "CONFIG", "INFO", "PING", "ROLE",
	                                       "CLUSTER", "SCRIPT", "WAIT", "ASKING", "SELECT", "AUTH"};
	for (const char *k : kKeyless)
		if (name == k)
			return true;
	return false;
}

bool
StartsWith(const std::string &s, const char *prefix)
{
	return s.rfind(prefix, 0) == 0;
}

} // namespace

int
CommandSlot(const std::vector<std::string> &argv, int home_slot)
{
	if (argv.size() < 2)
		return home_slot;
	std::string name = Upper(argv[0]);
	if (name == "EVAL" || name == "EVALSHA") {
		// EVAL <script> <numkeys> key...: no key, no slot of its own
		if (argv.size() < 4 || argv[2].empty() || argv[2] == "0")
			return home_slot;
		return chat_outbox::KeySlot(argv[3]);
	}
	if (Keyless(name))
		return home_slot;
	return chat_outbox::KeySlot(argv[1]);
}

ClusterReplyStep
ClassifyClusterReply(const RedisValue *reply)
{
	ClusterReplyStep step;
	if (!reply) {
		step.turn = ClusterTurn::kRefresh;
		return step;
	}
	if (!reply->IsError())
		return step;
	if (auto r = chat_outbox::ParseRedirect(reply->str)) {
		step.turn = r->kind == chat_outbox::RedirectKind::kMoved ? ClusterTurn::kMoved : ClusterTurn::kAsk;
		step.redirect = std::move(r);
		return step;
	}
	// the cluster is failing over or migrating: the command did not run, the map may be stale
	if (StartsWith(reply->str, "CLUSTERDOWN") || StartsWith(reply->str, "TRYAGAIN"))
		step.turn = ClusterTurn::kRefresh;
	return step;
}

bool
SlotRangesFromValue(const RedisValue &reply, const std::string &from_host, std::vector<chat_outbox::SlotRange> *out,
                    std::string *error)
{
	out->clear();
	if (reply.IsError()) {
		*error = "CLUSTER SLOTS refused: " + reply.str;
		return false;
	}
	if (!reply.IsArray()) {
		*error = "CLUSTER SLOTS: unexpected reply";
		return false;
	}
	for (const RedisValue &e : reply.elements) {
		if (!e.IsArray() || e.elements.size() < 3 || e.elements[0].type != RedisValue::Type::Integer ||
		    e.elements[1].type != RedisValue::Type::Integer) {
			*error = "CLUSTER SLOTS: unexpected reply";
			return false;
		}
		std::vector<std::string> hosts;
		std::vector<long long> ports;
		for (size_t k = 2; k < e.elements.size(); k++) {
			const RedisValue &node = e.elements[k];
			if (!node.IsArray() || node.elements.size() < 2 || node.elements[0].type != RedisValue::Type::String ||
			    node.elements[1].type != RedisValue::Type::Integer) {
				*error = "CLUSTER SLOTS: unexpected node in the reply";
				return false;
			}
			const std::string &host = node.elements[0].str;
			hosts.push_back(host.empty() || host == "?" ? from_host : host);
			ports.push_back(node.elements[1].integer);
		}
		std::string why;
		auto range = chat_outbox::SlotRangeFromReply(e.elements[0].integer, e.elements[1].integer, hosts, ports, &why);
		if (!range) {
			*error = "CLUSTER SLOTS: " + why;
			return false;
		}
		out->push_back(std::move(*range));
	}
	return true;
}

} // namespace chat_outboxd
