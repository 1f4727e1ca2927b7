// common/redis_cluster.cpp - Redis Cluster's client rules (see redis_cluster.hpp).
#include "common/redis_cluster.hpp"

#include <cctype>
#include <cstdlib>

namespace chat_outbox {

namespace {

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0, no reflection), the checksum the cluster
// specification names for key slots. Bitwise: a key is short and a table would be 512 bytes more.
uint16_t
Crc16(std::string_view s)
{
	uint16_t crc = 0;
	for (unsigned char c : s) {
		crc ^= static_cast<uint16_t>(c) << 8;
		for (int i = 0; i < 8; i++)
			crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
	}
	return crc;
}

bool
ParsePort(std::string_view s, int *port)
{
	if (s.empty() || s.size() > 5)
		return false;
	int v = 0;
	for (char c : s) {
		if (!std::isdigit(static_cast<unsigned char>(c)))
			return false;
		v = v * 10 + (c - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*port = v;
	return true;
}

} // namespace

int
KeySlot(std::string_view key)
{
	size_t open = key.find('{');
	if (open != std::string_view::npos) {
		size_t close = key.find('}', open + 1);
		if (close != std::string_view::npos && close > open + 1)
			key = key.substr(open + 1, close - open - 1);
	}
	return Crc16(key) % kClusterSlots;
}

std::string
ClusterQueueName(std::string_view queue)
{
	return "{" + std::string(queue) + "}";
}

bool
InClusterForm(std::string_view queue)
{
	return queue.size() > 2 && queue.front() == '{' && queue.back() == '}';
}

std::optional<Redirect>
ParseRedirect(std::string_view error)
{
	Redirect r{};
	if (error.rfind("MOVED ", 0) == 0) {
		r.kind = RedirectKind::kMoved;
		error.remove_prefix(6);
	} else if (error.rfind("ASK ", 0) == 0) {
		r.kind = RedirectKind::kAsk;
		error.remove_prefix(4);
	} else
		return std::nullopt;
	size_t space = error.find(' ');
	if (space == std::string_view::npos || space == 0 || space > 5)
		return std::nullopt;
	int slot = 0;
	for (char c : error.substr(0, space)) {
		if (!std::isdigit(static_cast<unsigned char>(c)))
			return std::nullopt;
		slot = slot * 10 + (c - '0');
	}
	if (slot >= kClusterSlots)
		return std::nullopt;
	r.slot = slot;
	std::string_view addr = error.substr(space + 1);
	size_t colon = addr.rfind(':'); // the port follows the last ':' (an IPv6 host has more)
	if (colon == std::string_view::npos || !ParsePort(addr.substr(colon + 1), &r.target.port))
		return std::nullopt;
	std::string_view host = addr.substr(0, colon);
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	r.target.host = std::string(host);
	return r;
}

RedisUrl
AtNode(const RedisUrl &url, const RedisEndpoint &node)
{
	RedisUrl r = url;
	r.cluster_nodes.clear();
	r.host = node.host;
	r.port = node.port;
	r.db = 0;
	return r;
}

bool
SameEndpoint(const RedisEndpoint &a, const RedisEndpoint &b)
{
	return a.port == b.port && a.host == b.host;
}

std::string
EndpointText(const RedisEndpoint &e)
{
	bool v6 = e.host.find(':') != std::string::npos;
	return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

int
SlotMap::IndexOf(const RedisEndpoint &e)
{
	for (size_t i = 0; i < masters_.size(); i++)
		if (SameEndpoint(masters_[i], e))
			return static_cast<int>(i);
	masters_.push_back(e);
	return static_cast<int>(masters_.size() - 1);
}

std::optional<SlotMap>
SlotMap::Build(const std::vector<SlotRange> &ranges, std::string *error)
{
	SlotMap m;
	m.owner_.assign(kClusterSlots, -1);
	for (const auto &r : ranges) {
		if (r.first < 0 || r.last >= kClusterSlots || r.first > r.last) {
			*error = "slot range " + std::to_string(r.first) + "-" + std::to_string(r.last) + " is not within 0-" +
			         std::to_string(kClusterSlots - 1);
			return std::nullopt;
		}
		int owner = m.IndexOf(r.master);
		for (int s = r.first; s <= r.last; s++) {
			if (m.owner_[s] != -1) {
				*error = "slot " + std::to_string(s) + " is claimed by two ranges";
				return std::nullopt;
			}
			m.owner_[s] = owner;
		}
	}
	return m;
}

std::optional<RedisEndpoint>
SlotMap::MasterOf(int slot) const
{
	if (slot < 0 || slot >= kClusterSlots || owner_[slot] < 0)
		return std::nullopt;
	return masters_[owner_[slot]];
}

std::vector<RedisEndpoint>
SlotMap::Masters() const
{
	std::vector<RedisEndpoint> out;
	std::vector<bool> seen(masters_.size(), false);
	for (int o : owner_)
		if (o >= 0 && !seen[o]) {
			seen[o] = true;
			out.push_back(masters_[o]);
		}
	return out;
}

bool
SlotMap::Covered() const
{
	for (int o : owner_)
		if (o < 0)
			return false;
	return true;
}

void
SlotMap::Moved(int slot, const RedisEndpoint &target)
{
	if (slot >= 0 && slot < kClusterSlots)
		owner_[slot] = IndexOf(target);
}

std::optional<SlotRange>
SlotRangeFromReply(long long first, long long last, const std::vector<std::string> &hosts,
                   const std::vector<long long> &ports, std::string *error)
{
	if (hosts.empty() || hosts.size() != ports.size()) {
		*error = "a CLUSTER SLOTS range without its master";
		return std::nullopt;
	}
	if (first < 0 || last >= kClusterSlots || first > last) {
		*error = "CLUSTER SLOTS named slots " + std::to_string(first) + "-" + std::to_string(last);
		return std::nullopt;
	}
	SlotRange r;
	r.first = static_cast<int>(first);
	r.last = static_cast<int>(last);
	for (size_t i = 0; i < hosts.size(); i++) {
		if (ports[i] < 1 || ports[i] > 65535) {
			*error = "CLUSTER SLOTS named port " + std::to_string(ports[i]);
			return std::nullopt;
		}
		RedisEndpoint e{hosts[i], static_cast<int>(ports[i])};
		if (i == 0)
			r.master = e;
		else
			r.replicas.push_back(e);
	}
	return r;
}

} // namespace chat_outbox
