// common/partitions.cpp - see partitions.hpp.
#include "common/partitions.hpp"
#include "common/redis_cluster.hpp"

#include <cctype>

#include "common/bullmq/queue_keys.hpp"

namespace chat_outbox {

int
PartitionOf(int64_t chat_id, int n)
{
	// in C++ the sign of % follows the dividend: -5 % 4 == -1, hence + n and % n again
	return static_cast<int>(((chat_id % n) + n) % n);
}

std::optional<int64_t>
ChatIdOfJson(std::string_view s)
{
	bool negative = !s.empty() && s[0] == '-';
	std::string_view digits = negative ? s.substr(1) : s;
	if (digits.empty() || digits.size() > 19)
		return std::nullopt;
	uint64_t v = 0;
	for (char c : digits) {
		if (c < '0' || c > '9')
			return std::nullopt;
		v = v * 10 + static_cast<uint64_t>(c - '0'); // 19 digits fit a uint64
	}
	const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
	if (v > limit)
		return std::nullopt;
	return negative ? static_cast<int64_t>(uint64_t{0} - v) : static_cast<int64_t>(v);
}

int
RowPartition(std::optional<int64_t> chat_id, int n)
{
	return chat_id ? PartitionOf(*chat_id, n) : 0;
}

std::string
PartitionQueue(std::string_view queue, int n, int p)
{
	std::string q(queue);
	if (n <= 1)
		return q;
	std::string suffix = "-p" + std::to_string(p);
	// the cluster form "{<queue>}" (common/redis_cluster.hpp): the suffix goes inside the tag, so each
	// partition's queue has a slot of its own
	if (InClusterForm(q))
		q.insert(q.size() - 1, suffix);
	else
		q.append(suffix);
	return q;
}

int
ShardOf(int p, int nshards)
{
	return p % nshards;
}

std::string
ShardName(size_t shard, size_t nshards)
{
	return nshards == 1 ? "redis" : "redis shard " + std::to_string(shard);
}

std::string
LayoutKey(std::string_view prefix, std::string_view queue)
{
	return bullmq::QueueKey(prefix, queue, bullmq::kPartitionsKeyName);
}

std::optional<int>
ParseLayout(const std::optional<std::string> &value)
{
	if (!value)
		return 1;
	if (value->empty() || value->size() > 3)
		return std::nullopt;
	int n = 0;
	for (char c : *value) {
		if (c < '0' || c > '9')
			return std::nullopt;
		n = n * 10 + (c - '0');
	}
	if (n < 1 || n > kMaxPartitions)
		return std::nullopt;
	return n;
}

std::string
LayoutValueProblem(std::string_view queue, std::string_view value)
{
	static const char hex[] = "0123456789abcdef";
	std::string shown;
	for (size_t i = 0; i < value.size() && i < kLayoutValueShown; i++) {
		const unsigned char c = static_cast<unsigned char>(value[i]);
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			shown += static_cast<char>(c);
		else
			shown.append("\\x").append(1, hex[c >> 4]).append(1, hex[c & 15]);
	}
	if (value.size() > kLayoutValueShown)
		shown += "...";
	return "the layout key of queue " + std::string(queue) + " holds \"" + shown + "\", not a partition count from 1 to " +
	       std::to_string(kMaxPartitions);
}

std::optional<std::vector<RedisUrl>>
ParseShardList(const std::string &urls, std::string *error)
{
	std::vector<RedisUrl> out;
	size_t i = 0;
	while (i < urls.size()) {
		if (std::isspace(static_cast<unsigned char>(urls[i]))) {
			i++;
			continue;
		}
		size_t end = i;
		while (end < urls.size() && !std::isspace(static_cast<unsigned char>(urls[end])))
			end++;
		std::string why;
		auto url = ParseRedisUrl(urls.substr(i, end - i), &why);
		if (!url) {
			if (error)
				*error = "Redis URL " + std::to_string(out.size() + 1) + ": " + why;
			return std::nullopt;
		}
		for (const auto &seen : out)
			if (seen.Redacted() == url->Redacted()) {
				if (error)
					*error = "Redis URL " + std::to_string(out.size() + 1) + " (" + url->Redacted() +
					         ") is in the list twice: each shard is one server";
				return std::nullopt;
			}
		out.push_back(std::move(*url));
		i = end;
	}
	if (out.empty()) {
		if (error)
			*error = "no Redis URL";
		return std::nullopt;
	}
	for (const auto &u : out)
		if (u.IsCluster() && out.size() > 1) {
			if (error)
				*error = "a redis-cluster:// or rediss-cluster:// URL is the whole broker (the cluster spreads the partitions over its "
				         "masters): give it alone, not in a shard list";
			return std::nullopt;
		}
	return out;
}

std::string
RedactedShardList(const std::vector<RedisUrl> &shards)
{
	std::string out;
	for (const auto &s : shards)
		out.append(out.empty() ? "" : " ").append(s.Redacted());
	return out;
}

} // namespace chat_outbox
