// common/cluster_map_watch.cpp - see cluster_map_watch.hpp.
#include "common/cluster_map_watch.hpp"

namespace chat_outbox {

void
ClusterMapWatch::MasterLost(const std::string &master, int64_t now_ms)
{
	if (state_ == ClusterWatchState::kSteady)
		next_ms_ = now_ms + kClusterRefreshMs;
	lost_.insert(master);
	state_ = ClusterWatchState::kWatching;
}

void
ClusterMapWatch::MasterAnswered(const std::string &master)
{
	lost_.erase(master);
	if (lost_.empty())
		state_ = ClusterWatchState::kSteady;
}

ClusterMapNews
ClusterMapWatch::MapRead(const std::vector<std::string> &masters, int64_t now_ms)
{
	if (state_ == ClusterWatchState::kSteady)
		return ClusterMapNews::kUnchanged;
	next_ms_ = now_ms + kClusterRefreshMs;
	if (masters.empty())
		return ClusterMapNews::kUnchanged;
	for (const auto &m : masters)
		if (lost_.count(m))
			return ClusterMapNews::kUnchanged;
	lost_.clear();
	state_ = ClusterWatchState::kSteady;
	return ClusterMapNews::kPromoted;
}

} // namespace chat_outbox
