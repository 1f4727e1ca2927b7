// daemon/src/net/sentinel_watchers.cpp - see sentinel_watchers.hpp.
//
// For developers: the watch's context carries the catch-up queries (SENTINEL get-master-addr-by-name)
// and then the SUBSCRIBEs, pipelined: hiredis gives pending replies to their callbacks before it
// treats anything as a pub/sub message, and the sentinel answers in order, so an announcement always
// arrives after the answers it is newer than.
#include "net/sentinel_watchers.hpp"

#include <set>
#include <strings.h>
#include <vector>

#include "base/c_boundary.hpp"
#include "base/log.hpp"
#include "net/hiredis_link.hpp"
#include "net/hiredis_uv.hpp"

namespace chat_outboxd {

namespace {

constexpr const char *kWho = "redis sentinel watch";

} // namespace

struct SentinelWatchers::Watch {
	struct Sub {
		std::string master;
		NewsCb on_news;
	};
	// Ask: the privdata of one catch-up query; freed by its callback.
	struct Ask {
		Watch *watch;
		std::string master;
	};

	SentinelWatch state;
	HiredisLink link;
	std::map<uint64_t, Sub> subs;
	size_t confirmed = 0; // Channels() confirmed on the live context

	Watch(uv_loop_t *loop, const chat_outbox::RedisUrl &url, const std::string &client_name, int64_t timeout_ms)
	    : link(
	          loop, SentinelRoute::ToSentinels(url),
	          HiredisLink::Options{kWho, client_name + ":sentinel-watch", timeout_ms, nullptr, true, {}, nullptr},
	          [this](const RedisValue &) { Up(); }, [this](const std::string &why) { Down(why); })
	{
	}

	std::string Sentinel() const
	{
		chat_outbox::RedisUrl at = link.Route().Next();
		return at.host + ":" + std::to_string(at.port);
	}

	// Up: the handshake is done: ask where each subscribed master is, then subscribe.
	void Up()
	{
		confirmed = 0;
		std::set<std::string> masters;
		for (const auto &s : subs)
			masters.insert(s.second.master);
		for (const std::string &m : masters) {
			auto *ask = new Ask{this, m};
			if (!link.Send(SentinelWatch::AskCommand(m), OnAnswer, ask)) {
				delete ask;
				link.Drop("SENTINEL get-master-addr-by-name not accepted");
				return;
			}
		}
		for (const std::string &channel : SentinelWatch::Channels())
			if (!link.Send({"SUBSCRIBE", channel}, OnPubSub, this)) {
				link.Drop("SUBSCRIBE not accepted");
				return;
			}
		link.Await("subscribe");
	}

	void Down(const std::string &why)
	{
		confirmed = 0;
		std::string line = state.Down(Sentinel(), why);
		if (!line.empty())
			Log(Level::Warning, "%s: %s", kWho, line.c_str());
	}

	// Tell: every subscriber of news's master hears it (a copy of the list: a callback may unsubscribe).
	void Tell(const MasterNews &news)
	{
		std::vector<NewsCb> to;
		for (const auto &s : subs)
			if (s.second.master == news.name)
				to.push_back(s.second.on_news);
		for (const auto &cb : to)
			cb(news);
	}

	static void OnAnswer(redisAsyncContext *c, void *r, void *privdata) noexcept
	{
		std::unique_ptr<Ask> ask(static_cast<Ask *>(privdata));
		Watch *self = ask->watch;
		CallFromC(kWho, "sentinel answer", [&] {
			if (!r || self->link.Context() != c || !self->link.Up())
				return;
			if (auto news = SentinelWatch::Answer(ask->master, ConvertReply(static_cast<const redisReply *>(r))))
				self->Tell(*news);
		});
	}

	static void OnPubSub(redisAsyncContext *c, void *r, void *privdata) noexcept
	{
		auto *self = static_cast<Watch *>(privdata);
		CallFromC(kWho, "pub/sub reply", [&] {
			if (!r || self->link.Context() != c || !self->link.Up())
				return;
			RedisValue v = ConvertReply(static_cast<const redisReply *>(r));
			if (v.type != RedisValue::Type::Array || v.elements.size() < 3)
				return;
			const std::string &kind = v.elements[0].str;
			if (strcasecmp(kind.c_str(), "message") == 0) {
				if (auto news = SentinelWatch::Announcement(v.elements[1].str, v.elements[2].str))
					self->Tell(*news);
			} else if (strcasecmp(kind.c_str(), "subscribe") == 0 &&
			           ++self->confirmed == SentinelWatch::Channels().size()) {
				self->link.Recovered();
				std::string line = self->state.Up(self->Sentinel());
				if (!line.empty())
					Log(Level::Notice, "%s: %s", kWho, line.c_str());
			}
		});
	}
};

SentinelWatchers::SentinelWatchers(uv_loop_t *loop, std::string client_name, int64_t timeout_ms)
    : loop_(loop), client_name_(std::move(client_name)), timeout_ms_(timeout_ms)
{
}

SentinelWatchers::~SentinelWatchers() = default;

uint64_t
SentinelWatchers::Subscribe(const chat_outbox::RedisUrl &url, NewsCb on_news)
{
	if (closed_ || !url.IsSentinel())
		return 0;
	std::unique_ptr<Watch> &w = watches_[SentinelWatch::Key(url)];
	if (!w) {
		w = std::make_unique<Watch>(loop_, url, client_name_, timeout_ms_);
		w->link.Start();
	}
	uint64_t id = next_id_++;
	w->subs[id] = Watch::Sub{url.master_name, std::move(on_news)};
	return id;
}

void
SentinelWatchers::Unsubscribe(uint64_t id)
{
	for (auto &w : watches_)
		w.second->subs.erase(id);
}

void
SentinelWatchers::Close(std::function<void()> done)
{
	if (closed_) {
		if (done)
			done();
		return;
	}
	closed_ = true;
	auto left = std::make_shared<size_t>(watches_.size() + 1);
	auto one = [left, done = std::move(done)] {
		if (--*left == 0 && done)
			done();
	};
	for (auto &w : watches_) {
		w.second->subs.clear();
		w.second->link.Close(one);
	}
	one();
}

} // namespace chat_outboxd
