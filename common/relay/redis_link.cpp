// common/relay/redis_link.cpp - OpenRedisLink, the one place a relay's broker kind is chosen (redis_link.hpp).
#include "common/relay/redis_link.hpp"

#include "common/relay/cluster_router.hpp"
#include "common/relay/redis_server_link.hpp"
#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

std::unique_ptr<RedisLink>
OpenRedisLink(const RedisUrl &url, int64_t timeout_ms, const std::string &prefix, int64_t min_replicas)
{
	if (url.IsCluster())
		return std::make_unique<ClusterRouter>(url, timeout_ms, prefix, min_replicas);
	return std::make_unique<RedisServerLink>(url, timeout_ms, prefix, min_replicas);
}

} // namespace chat_outbox
