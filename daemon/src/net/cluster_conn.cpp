// daemon/src/net/cluster_conn.cpp - see cluster_conn.hpp.
//
// For developers: each master's connection is an ordinary RedisConn at that node (AtNode), so the
// handshake, TLS, deadlines and reconnect backoff are RedisConn's; this file only chooses where a
// command goes and when the map is read again. Node connections are closed on a later turn of the loop
// (never inside one of their own callbacks) and freed once their handles are released.
#include "net/cluster_conn.hpp"

#include <map>
#include <optional>

#include "base/uv_timer.hpp"
#include "common/tls_session.hpp"
#include "net/core/cluster_route.hpp"
#include "net/deferred_replies.hpp"
#include "net/redis_conn.hpp"

namespace chat_outboxd {

using chat_outbox::EndpointText;
using chat_outbox::RedisEndpoint;
using chat_outbox::SlotMap;

namespace {

// KnownMasters: per cluster (its URL's seed nodes), the masters of the last map any of this process's
// links read. A link made later (a partition's consumer, made when its lease is taken, often just after a
// failover) asks them for its first map before the URL's seeds, the first of which may be the master just
// lost: a dead seed costs kClusterSeedTicks refreshes (1 s) before the next is tried. The daemon runs one
// loop, so one table serves every link.
std::vector<RedisEndpoint> &
KnownMasters(const chat_outbox::RedisUrl &url)
{
	static std::map<std::string, std::vector<RedisEndpoint>> known;
	std::string key;
	for (const auto &e : url.cluster_nodes)
		key += EndpointText(e) + ",";
	return known[key];
}

} // namespace

struct ClusterConn::Impl {
	struct Retired {
		std::unique_ptr<RedisConn> conn;
		std::shared_ptr<bool> closed = std::make_shared<bool>(false);
	};

	uv_loop_t *loop;
	chat_outbox::RedisUrl url;
	int home_slot;
	bool all_masters;
	std::string role, client_name;
	int64_t timeout_ms;
	StateLog *state_log;
	// The seed connections' outages, logged once each however many seed connections fail the same way in
	// turn (each seed is a new RedisConn; without one shared log each would log its first failure).
	StateLog seed_log;

	std::optional<SlotMap> map;
	std::string masters_text;                                // the last map's masters, for the log
	std::map<std::string, std::unique_ptr<RedisConn>> nodes; // by EndpointText
	std::vector<std::unique_ptr<RedisConn>> to_close;        // closed on the next turn of the loop
	std::vector<Retired> retired;                            // closing; freed once closed
	std::string home;                                        // EndpointText of the home slot's master
	bool ready = false;
	bool started = false, closed = false;
	bool refreshing = false;
	std::unique_ptr<RedisConn> seed; // a node asked for the map while no master is connected
	RedisEndpoint seed_at;
	int seed_ticks = 0;
	size_t seed_cursor = 0;
	std::vector<std::function<void()>> on_ready;
	std::function<void()> on_down;
	UvTimer tick_timer;
	DeferredReplies deferred;
	UvTimer sweep_timer;

	Impl(uv_loop_t *l, chat_outbox::RedisUrl u, const std::string &home_key, bool all, std::string r, std::string n,
	     int64_t t, StateLog *s)
	    : loop(l), url(std::move(u)), home_slot(chat_outbox::KeySlot(home_key)), all_masters(all), role(std::move(r)),
	      client_name(std::move(n)), timeout_ms(t), state_log(s), seed_log(role + " cluster seed"), tick_timer(l, "redis cluster refresh"),
	      deferred(l, "redis cluster deferred failures"), sweep_timer(l, "redis cluster closing")
	{
	}

	// --- node connections ---------------------------------------------------------------------

	RedisConn &Node(const RedisEndpoint &at)
	{
		std::string key = EndpointText(at);
		auto it = nodes.find(key);
		if (it != nodes.end())
			return *it->second;
		auto conn = std::make_unique<RedisConn>(loop, chat_outbox::AtNode(url, at), role + " " + key, client_name,
		                                        timeout_ms, state_log, nullptr);
		conn->OnReady([this, key] { NodeUp(key); });
		conn->OnDown([this, key] { NodeDown(key); });
		RedisConn &ref = *conn;
		nodes.emplace(key, std::move(conn));
		if (started)
			ref.Start();
		return ref;
	}

	void NodeUp(const std::string &key)
	{
		if (closed)
			return;
		if (seed)
			Retire(std::move(seed)); // a master answers now
		if (key == home && map && !ready)
			BecomeReady();
	}

	void NodeDown(const std::string &)
	{
		if (closed)
			return;
		CheckHome();
		Refresh(); // a failover, perhaps: the cluster names the new master once it promoted one
	}

	// HomeUp: the home master's connection is up. A RedisConn whose context fails with commands pending
	// fails them first and then reports no OnDown, so the link looks at the connection itself.
	bool HomeUp() const
	{
		auto it = nodes.find(home);
		return it != nodes.end() && it->second->Ready();
	}

	// CheckHome: the home connection was lost: the owner hears OnDown once.
	void CheckHome()
	{
		if (!ready || HomeUp())
			return;
		ready = false;
		if (on_down)
			on_down();
	}

	// MasterDown: a master of the map has no live connection of ours (a failover under way, perhaps).
	bool MasterDown() const
	{
		for (const auto &[key, conn] : nodes)
			if (!conn->Ready())
				return true;
		return false;
	}

	void BecomeReady()
	{
		ready = true;
		for (auto &cb : on_ready)
			cb();
	}

	// Retire closes a connection on the next turn of the loop (it may be running one of its callbacks).
	void Retire(std::unique_ptr<RedisConn> conn)
	{
		to_close.push_back(std::move(conn));
		sweep_timer.Start(0, [this] { Sweep(); });
	}

	void Sweep()
	{
		for (auto &c : to_close) {
			Retired r;
			r.conn = std::move(c);
			auto flag = r.closed;
			RedisConn *p = r.conn.get();
			retired.push_back(std::move(r));
			p->Close([flag] { *flag = true; });
		}
		to_close.clear();
	}

	// --- the slot map ---------------------------------------------------------------------------

	void Tick()
	{
		for (auto it = retired.begin(); it != retired.end();)
			it = *it->closed ? retired.erase(it) : std::next(it);
		if (closed)
			return;
		CheckHome();
		// while a master we use is not connected, read the map again each tick: the cluster names the
		// promoted replica once its failover is done
		if (ready && !MasterDown())
			return;
		if (seed && !seed->Ready() && ++seed_ticks >= kClusterSeedTicks) {
			// that node does not answer: said once per outage and cause, as the seeds' failures are (a plaintext
			// node behind rediss-cluster:// never answers the handshake, and its own timeout is longer
			// than a seed's turn), then the next one
			std::string why = EndpointText(seed_at) + ": no answer within " +
			                  std::to_string(kClusterSeedTicks * kClusterRefreshMs) + " ms";
			if (url.tls.enabled)
				why += std::string(" ") + chat_outbox::kTlsSilentHint;
			seed_log.Down(why);
			Retire(std::move(seed));
			seed_cursor++;
		}
		Refresh();
	}

	// Source: a connected node to ask for the map (the home master first), or null while a seed connects.
	RedisConn *Source(std::string *host)
	{
		auto pick = [&](const std::string &key) -> RedisConn * {
			auto it = nodes.find(key);
			if (it == nodes.end() || !it->second->Ready())
				return nullptr;
			*host = key.substr(0, key.rfind(':'));
			if (!host->empty() && host->front() == '[')
				*host = host->substr(1, host->size() - 2);
			return it->second.get();
		};
		if (RedisConn *c = pick(home))
			return c;
		for (auto &[key, conn] : nodes)
			if (RedisConn *c = pick(key))
				return c;
		if (seed && seed->Ready()) {
			*host = seed_at.host;
			return seed.get();
		}
		if (!seed) {
			std::vector<RedisEndpoint> candidates;                         // the other masters first: the home one is down
			for (const auto &e : map ? map->Masters() : KnownMasters(url)) // a new link: the process's last map's
				if (EndpointText(e) != home)
					candidates.push_back(e);
			candidates.insert(candidates.end(), url.cluster_nodes.begin(), url.cluster_nodes.end());
			seed_at = candidates[seed_cursor % candidates.size()];
			seed_ticks = 0;
			// named apart: the identity check (consumer/identity_guard.hpp) takes an older connection of
			// our name on the home master for another daemon's
			seed = std::make_unique<RedisConn>(loop, chat_outbox::AtNode(url, seed_at),
			                                   role + " seed " + EndpointText(seed_at), client_name + ":seed", timeout_ms,
			                                   &seed_log, nullptr);
			seed->OnReady([this] { Refresh(); });
			seed->Start();
		}
		return nullptr;
	}

	void Refresh()
	{
		if (closed || !started || refreshing)
			return;
		std::string host;
		RedisConn *source = Source(&host);
		if (!source)
			return;
		refreshing = true;
		source->Command({"CLUSTER", "SLOTS"}, [this, host](const RedisValue *r, const std::string &err) {
			refreshing = false;
			if (closed)
				return;
			std::vector<chat_outbox::SlotRange> ranges;
			std::string error = err;
			std::optional<SlotMap> m;
			if (r && SlotRangesFromValue(*r, host, &ranges, &error))
				m = SlotMap::Build(ranges, &error);
			if (m && !m->Covered()) {
				error = "not every slot has a master (CLUSTERDOWN)";
				m.reset();
			}
			if (!m) {
				Log(Level::Verbose, "%s: no slot map from %s: %s", role.c_str(), host.c_str(), error.c_str());
				return; // the next tick (or failure) asks again
			}
			Apply(std::move(*m));
		});
	}

	void Apply(SlotMap m)
	{
		std::string text;
		for (const auto &e : m.Masters())
			text += (text.empty() ? "" : " ") + EndpointText(e);
		if (text != masters_text)
			Log(masters_text.empty() ? Level::Verbose : Level::Notice, "%s: redis cluster masters %s%s", role.c_str(),
			    text.c_str(), masters_text.empty() ? "" : (", were " + masters_text).c_str());
		masters_text = text;
		KnownMasters(url) = m.Masters();
		map = std::move(m);
		std::string new_home = EndpointText(*map->MasterOf(home_slot));
		// a node that serves no slot now (a failed master, or one made a replica) is closed
		for (auto it = nodes.begin(); it != nodes.end();) {
			bool master = false;
			for (const auto &e : map->Masters())
				master = master || EndpointText(e) == it->first;
			if (master) {
				++it;
				continue;
			}
			Retire(std::move(it->second));
			it = nodes.erase(it);
		}
		if (all_masters)
			for (const auto &e : map->Masters())
				Node(e);
		RedisConn &h = Node(*map->MasterOf(home_slot));
		if (new_home != home) {
			if (!home.empty())
				Log(Level::Notice, "%s: home slot %d is served by %s now%s", role.c_str(), home_slot, new_home.c_str(),
				    (", was " + home).c_str());
			bool was = ready;
			ready = false;
			home = new_home;
			if (was && on_down)
				on_down();
		}
		if (!ready && h.Ready())
			BecomeReady();
	}

	// --- commands -----------------------------------------------------------------------------

	void Defer(ReplyCb cb, std::string why) { deferred.Add(std::move(cb), std::move(why)); }

	void Send(int slot, std::shared_ptr<std::vector<std::string>> argv, ReplyCb cb, int64_t timeout, int hops)
	{
		std::optional<RedisEndpoint> at = map ? map->MasterOf(slot) : std::nullopt;
		if (!at) {
			Refresh();
			Defer(std::move(cb), "redis cluster: slot " + std::to_string(slot) + " has no master");
			return;
		}
		RedisConn &c = Node(*at);
		if (!c.Ready()) {
			Refresh();
			Defer(std::move(cb), "not connected to redis " + EndpointText(*at));
			return;
		}
		c.Command(
		    *argv,
		    [this, slot, argv, cb = std::move(cb), timeout, hops, at = *at](const RedisValue *r, const std::string &err) {
			Answered(slot, argv, cb, timeout, hops, at, r, err);
		    },
		    timeout);
	}

	void Answered(int slot, const std::shared_ptr<std::vector<std::string>> &argv, const ReplyCb &cb, int64_t timeout,
	              int hops, const RedisEndpoint &from, const RedisValue *r, const std::string &err)
	{
		ClusterReplyStep step = ClassifyClusterReply(r);
		if (closed || step.turn == ClusterTurn::kAnswer || hops >= kMaxClusterHops) {
			if (cb)
				cb(r, err);
			return;
		}
		if (step.turn == ClusterTurn::kRefresh) {
			CheckHome();
			Refresh();
			if (cb)
				cb(r, err);
			return;
		}
		RedisEndpoint target = step.redirect->target;
		if (target.host.empty())
			target.host = from.host; // ":port": the replying node's host
		if (step.turn == ClusterTurn::kMoved) {
			Log(Level::Verbose, "%s: slot %d moved to %s", role.c_str(), step.redirect->slot, EndpointText(target).c_str());
			map->Moved(step.redirect->slot, target);
			Refresh();
			Send(slot, argv, cb, timeout, hops + 1);
			return;
		}
		// ASK: this key is on the target already; ask it there, once
		Log(Level::Verbose, "%s: slot %d: ASK to %s", role.c_str(), step.redirect->slot, EndpointText(target).c_str());
		RedisConn &t = Node(target);
		if (!t.Ready()) {
			if (cb)
				cb(r, err);
			return;
		}
		t.Command({"ASKING"}, nullptr, timeout);
		t.Command(
		    *argv,
		    [this, slot, argv, cb, timeout, hops, target](const RedisValue *r2, const std::string &err2) {
			Answered(slot, argv, cb, timeout, hops + 1, target, r2, err2);
		    },
		    timeout);
	}
};

ClusterConn::ClusterConn(uv_loop_t *loop, chat_outbox::RedisUrl url, const std::string &home_key, bool all_masters,
                         std::string role, std::string client_name, int64_t timeout_ms, StateLog *state_log)
    : impl_(std::make_unique<Impl>(loop, std::move(url), home_key, all_masters, std::move(role), std::move(client_name),
                                   timeout_ms, state_log))
{
}

ClusterConn::~ClusterConn()
{
	if (!impl_->closed) {
		impl_->on_ready.clear();
		impl_->on_down = nullptr;
		impl_->deferred.Forget();
		Close(nullptr);
	}
}

void
ClusterConn::Start()
{
	Impl *d = impl_.get();
	if (d->started)
		return;
	d->started = true;
	for (auto &[key, conn] : d->nodes)
		conn->Start();
	d->tick_timer.Start(
	    static_cast<uint64_t>(kClusterRefreshMs), [d] { d->Tick(); }, static_cast<uint64_t>(kClusterRefreshMs));
	d->Refresh();
}

bool
ClusterConn::Ready() const
{
	return impl_->ready && impl_->HomeUp();
}

void
ClusterConn::OnReady(std::function<void()> on_ready)
{
	impl_->on_ready.push_back(std::move(on_ready));
}

void
ClusterConn::OnDown(std::function<void()> on_down)
{
	impl_->on_down = std::move(on_down);
}

void
ClusterConn::Command(std::vector<std::string> argv, ReplyCb cb, int64_t timeout_ms)
{
	Impl *d = impl_.get();
	if (!Ready()) {
		d->CheckHome();
		d->Defer(std::move(cb), "not connected to redis cluster");
		return;
	}
	int slot = CommandSlot(argv, d->home_slot);
	d->Send(slot, std::make_shared<std::vector<std::string>>(std::move(argv)), std::move(cb),
	        timeout_ms > 0 ? timeout_ms : d->timeout_ms, 0);
}

int64_t
ClusterConn::ClientId() const
{
	auto it = impl_->nodes.find(impl_->home);
	return it == impl_->nodes.end() ? 0 : it->second->ClientId();
}

void
ClusterConn::Drop(const std::string &why)
{
	for (auto &[key, conn] : impl_->nodes)
		conn->Drop(why);
}

void
ClusterConn::Close(std::function<void()> done)
{
	Impl *d = impl_.get();
	if (d->closed)
		return;
	d->closed = true;
	d->ready = false;
	d->deferred.Closing();
	d->Sweep();
	auto left = std::make_shared<size_t>(1);
	auto one = [left, done = std::move(done)] {
		if (--*left == 0 && done)
			done();
	};
	for (auto &[key, conn] : d->nodes) {
		++*left;
		conn->Close(one);
	}
	if (d->seed) {
		++*left;
		d->seed->Close(one);
	}
	// the retired connections are closing already (Sweep): their handles outlive them safely
	++*left;
	CloseAll(one, d->tick_timer, d->deferred, d->sweep_timer);
	one();
}

} // namespace chat_outboxd
