// common/relay/cluster_router.cpp - see cluster_router.hpp.
#include "common/relay/cluster_router.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "common/bullmq/queue_keys.hpp"
#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

namespace {

bool
StartsWith(const std::string &s, const char *prefix)
{
	return s.rfind(prefix, 0) == 0;
}

// NamedByMaster: a master's failure, named by the master (the status and the log say which node)
RedisFailure
NamedByMaster(const RedisFailure &f, const std::string &master)
{
	return RedisFailure(f.kind, "redis cluster: master " + master + ": " + f.what());
}

int64_t
RouterNowMs()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

} // namespace

ClusterRouter::ClusterRouter(RedisUrl url, int64_t timeout_ms, std::string prefix, int64_t min_replicas)
    : url_(std::move(url)), timeout_ms_(timeout_ms), prefix_(std::move(prefix)), min_replicas_(min_replicas)
{
}

ClusterRouter::~ClusterRouter() = default;

RedisServerLink &
ClusterRouter::Node(const RedisEndpoint &e)
{
	auto &link = nodes_[EndpointText(e)];
	if (!link)
		link = std::make_unique<RedisServerLink>(AtNode(url_, e), timeout_ms_, prefix_, min_replicas_);
	return *link;
}

void
ClusterRouter::Refresh()
{
	map_.reset();
	maps_read_++;
	std::vector<RedisEndpoint> candidates = last_masters_; // the masters of the last map first
	candidates.insert(candidates.end(), url_.cluster_nodes.begin(), url_.cluster_nodes.end());
	// the lost masters last: a dead one costs a refused connect, a hung one the timeout
	std::stable_partition(candidates.begin(), candidates.end(),
	                      [this](const RedisEndpoint &e) { return !watch_.Lost(EndpointText(e)); });
	std::string why = "no cluster node to ask";
	for (const auto &e : candidates) {
		try {
			auto ranges = Node(e).ClusterSlots();
			std::string error;
			auto map = SlotMap::Build(ranges, &error);
			if (!map) {
				why = EndpointText(e) + ": " + error;
				continue;
			}
			if (!map->Covered()) {
				why = EndpointText(e) + ": not every slot has a master (CLUSTERDOWN)";
				continue;
			}
			std::string masters;
			for (const auto &m : map->Masters())
				masters += (masters.empty() ? "" : " ") + EndpointText(m);
			if (masters != masters_)
				AddNotice("redis cluster: masters " + masters + (masters_.empty() ? "" : ", were " + masters_));
			masters_ = masters;
			last_masters_ = map->Masters();
			map_ = std::move(map);
			return;
		} catch (const RedisFailure &f) {
			why = EndpointText(e) + ": " + f.what();
		}
	}
	throw RedisFailure(RedisFailure::kConnection, "redis cluster: no slot map: " + why);
}

template <class Op>
auto
ClusterRouter::Routed(int slot, Op op) -> decltype(op(std::declval<RedisServerLink &>(), RedisEndpoint{}))
{
	std::optional<RedisEndpoint> ask;
	for (int hop = 0;; hop++) {
		if (!map_)
			Refresh();
		RedisEndpoint target = ask ? *ask : *map_->MasterOf(slot);
		RedisServerLink &link = Node(target);
		try {
			if (ask)
				link.Asking();
			ask.reset();
			auto out = op(link, target);
			if (watch_.State() == ClusterWatchState::kWatching)
				watch_.MasterAnswered(EndpointText(target));
			return out;
		} catch (const RedisFailure &f) {
			if (f.kind == RedisFailure::kConnection) {
				Lost(EndpointText(target)); // a failover, probably: the next call reads the map again
				throw NamedByMaster(f, EndpointText(target));
			}
			if (f.kind != RedisFailure::kService || hop >= kMaxRedirects)
				throw;
			if (StartsWith(f.reply, "CLUSTERDOWN") || StartsWith(f.reply, "LOADING")) {
				map_.reset();
				throw RedisFailure(RedisFailure::kConnection, std::string("redis cluster: ") + f.what());
			}
			if (StartsWith(f.reply, "TRYAGAIN")) {
				std::this_thread::sleep_for(std::chrono::milliseconds(kTryAgainPauseMs));
				continue;
			}
			auto r = ParseRedirect(f.reply);
			if (!r)
				throw;
			if (r->target.host.empty())
				r->target.host = target.host;
			if (r->kind == RedirectKind::kMoved) {
				map_.reset(); // a reshard or a failover moved slots: read the whole map again
				AddNotice("redis cluster: slot " + std::to_string(r->slot) + " moved to " + EndpointText(r->target) +
				          " (MOVED); reading the slot map again");
			} else {
				ask = r->target;
				asks_++;
			}
		}
	}
}

std::vector<std::optional<std::string>>
ClusterRouter::AddBatch(const std::string &queue, const LayoutCheck &layout, const MarkStep &mark, const JobSpec *jobs,
                        size_t n)
{
	return Routed(KeySlot(bullmq::QueueKey(prefix_, queue, "wait")), [&](RedisServerLink &link, const RedisEndpoint &at) {
		auto out = link.AddBatch(queue, layout, mark, jobs, n);
		written_.insert(EndpointText(at));
		return out;
	});
}

void
ClusterRouter::ConfirmReplicated()
{
	std::set<std::string> written;
	written.swap(written_);
	for (const auto &text : written) {
		try {
			nodes_.at(text)->ConfirmReplicated();
		} catch (const RedisFailure &f) {
			Lost(text);
			throw NamedByMaster(f, text);
		}
	}
}

std::optional<std::string>
ClusterRouter::Get(const std::string &key)
{
	return Routed(KeySlot(key), [&](RedisServerLink &link, const RedisEndpoint &) { return link.Get(key); });
}

void
ClusterRouter::Set(const std::string &key, const std::string &value)
{
	Routed(KeySlot(key), [&](RedisServerLink &link, const RedisEndpoint &at) {
		link.Set(key, value);
		written_.insert(EndpointText(at));
		return 0;
	});
}

int64_t
ClusterRouter::EvalInteger(const std::string &script, const std::vector<std::string> &keys)
{
	std::map<int, std::vector<std::string>> by_slot;
	for (const auto &k : keys)
		by_slot[KeySlot(k)].push_back(k);
	int64_t sum = 0;
	for (const auto &[slot, group] : by_slot)
		sum += Routed(slot, [&](RedisServerLink &link, const RedisEndpoint &) { return link.EvalInteger(script, group); });
	return sum;
}

void
ClusterRouter::Ping()
{
	Refresh();
	for (const auto &m : map_->Masters()) {
		try {
			Node(m).Ping();
			watch_.MasterAnswered(EndpointText(m));
		} catch (const RedisFailure &f) {
			Lost(EndpointText(m));
			throw NamedByMaster(f, EndpointText(m));
		}
	}
}

void
ClusterRouter::Lost(const std::string &master)
{
	map_.reset();
	watch_.MasterLost(master, RouterNowMs());
}

bool
ClusterRouter::AwaitingPromotion() const
{
	return watch_.State() == ClusterWatchState::kWatching;
}

bool
ClusterRouter::Promoted()
{
	if (!watch_.Due(RouterNowMs()))
		return false;
	std::vector<std::string> masters; // none when no node gives a whole map: not yet
	try {
		Refresh();
		for (const auto &m : map_->Masters())
			masters.push_back(EndpointText(m));
	} catch (const RedisFailure &) {
	}
	return watch_.MapRead(masters, RouterNowMs()) == ClusterMapNews::kPromoted;
}

void
ClusterRouter::Disconnect()
{
	for (auto &[text, link] : nodes_)
		link->Disconnect();
	map_.reset();
}

bool
ClusterRouter::Connected() const
{
	return map_.has_value();
}

int64_t
ClusterRouter::Connects() const
{
	int64_t n = maps_read_;
	for (const auto &[text, link] : nodes_)
		n += link->Connects();
	return n;
}

std::string
ClusterRouter::Warning() const
{
	for (const auto &[text, link] : nodes_)
		if (link->Connected() && !link->Warning().empty())
			return text + ": " + link->Warning();
	return "";
}

std::string
ClusterRouter::Appendfsync() const
{
	for (const auto &[text, link] : nodes_)
		if (link->Connected())
			return link->Appendfsync();
	return "";
}

int64_t
ClusterRouter::ScriptReloads() const
{
	int64_t n = 0;
	for (const auto &[text, link] : nodes_)
		n += link->ScriptReloads();
	return n;
}

void
ClusterRouter::AddNotice(const std::string &line)
{
	notice_ += (notice_.empty() ? "" : "; ") + line;
}

std::string
ClusterRouter::TakeNotice()
{
	if (asks_ > 0)
		AddNotice("redis cluster: " + std::to_string(std::exchange(asks_, 0)) +
		          " call(s) followed ASK to a slot's migration target");
	std::string out = std::exchange(notice_, std::string());
	for (auto &[text, link] : nodes_)
		if (std::string n = link->TakeNotice(); !n.empty())
			out += (out.empty() ? "" : "; ") + n;
	return out;
}

} // namespace chat_outbox
