// common/partitions.cpp - see partitions.hpp.
#include "partitions.hpp"

namespace chat_outbox {

int64_t
PartitionOf(int64_t chat_id, int64_t n)
{
	return ((chat_id % n) + n) % n;
}

std::string
PartitionQueue(std::string_view queue, int64_t n, int64_t p)
{
	if (n == 1)
		return std::string(queue);
	return std::string(queue) + "-p" + std::to_string(p);
}

size_t
ShardOf(int64_t p, size_t shards)
{
	return static_cast<size_t>(p) % shards;
}

std::vector<std::string>
SplitRedisUrls(std::string_view list)
{
	std::vector<std::string> out;
	size_t i = 0;
	auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
	while (i < list.size()) {
		while (i < list.size() && space(list[i]))
			i++;
		size_t start = i;
		while (i < list.size() && !space(list[i]))
			i++;
		if (i > start)
			out.emplace_back(list.substr(start, i - start));
	}
	return out;
}

std::optional<int64_t>
ParsePartitionCount(std::string_view text)
{
	if (text.empty() || text.size() > 4)
		return std::nullopt;
	int64_t v = 0;
	for (char c : text) {
		if (c < '0' || c > '9')
			return std::nullopt;
		v = v * 10 + (c - '0');
	}
	if (v < 1 || v > kMaxPartitions)
		return std::nullopt;
	return v;
}

} // namespace chat_outbox
