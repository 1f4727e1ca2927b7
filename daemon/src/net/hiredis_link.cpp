// daemon/src/net/hiredis_link.cpp - see hiredis_link.hpp.
//
// For developers: freeing a context makes hiredis run every pending callback once with a null
// reply, then the disconnect callback. Every callback compares the context it is called for with
// the live one, so a reply of a context being freed never touches the next connection. Every
// callback from hiredis or libuv runs through CallFromC.
#include "net/hiredis_link.hpp"

#include <memory>

#include "base/c_boundary.hpp"
#include "common/redis_argv.hpp"
#include "common/redis_sentinel.hpp"
#include "common/tls_session.hpp"
#include "metrics/core/daemon_metrics.hpp"
#include "net/hiredis_uv.hpp"
#include "net/sentinel_watchers.hpp"

namespace chat_outboxd {

namespace {

// kWatchdogMs: how often the deadline is checked (it is whole seconds, so this is fine grained), and
// how often the owner's tick runs.
constexpr uint64_t kWatchdogMs = 100;

} // namespace

// HandshakeStep is the privdata of one handshake command; freed by its callback.
struct HiredisLink::HandshakeStep {
	HiredisLink *owner;
	bool last;
	std::string what;
};

HiredisLink::HiredisLink(uv_loop_t *loop, const chat_outbox::RedisUrl &url, Options options,
                         std::function<void(const RedisValue &last)> up, std::function<void(const std::string &why)> down)
    : HiredisLink(loop, SentinelRoute(url), std::move(options), std::move(up), std::move(down))
{
}

HiredisLink::HiredisLink(uv_loop_t *loop, SentinelRoute route, Options options,
                         std::function<void(const RedisValue &last)> up, std::function<void(const std::string &why)> down)
    : loop_(loop), route_(std::move(route)), opt_(std::move(options)), up_(std::move(up)), down_(std::move(down)),
      retry_timer_(loop, "redis reconnect"), watchdog_(loop, "redis connect deadline")
{
}

HiredisLink::~HiredisLink()
{
	// Without a Shut the hiredis context would outlive us and call into freed memory.
	Shut();
}

void
HiredisLink::Start()
{
	if (state_ != State::Idle)
		return;
	state_ = State::Down;
	watchdog_.Start(
	    kWatchdogMs, [this] { Watchdog(); }, kWatchdogMs);
	retry_timer_.Start(0, [this] { Connect(); });
	if (route_.Watching() && opt_.watchers)
		watch_id_ = opt_.watchers->Subscribe(route_.Url(), [this](const MasterNews &news) {
			if (route_.SwitchedAway(news))
				MasterMoved("the sentinels name " + news.address + " as master '" + news.name + "' (" + news.source + ")");
		});
}

void
HiredisLink::Connect()
{
	if (state_ != State::Down)
		return;
	std::string why;
	redisAsyncContext *c = OpenContext(loop_, route_.Next(), this, OnConnect, OnDisconnect, &why);
	if (!c) {
		Gone(why);
		return;
	}
	ac_ = c;
	state_ = State::Connecting;
	deadline_ = 0;
	// a rediss:// connection is connected once its TLS handshake is done (net/hiredis_uv.hpp); a
	// plaintext server behind it never answers the handshake, so its timeout names that cause
	if (route_.Next().tls.enabled)
		Await("connect and TLS handshake", chat_outbox::kTlsSilentHint);
	else
		Await("connect");
}

// ForLive runs f (through CallFromC) on the link of c, unless c is no longer its live context.
template <typename F>
void
HiredisLink::ForLive(const redisAsyncContext *c, const char *where, F &&f) noexcept
{
	auto *self = static_cast<HiredisLink *>(c->data);
	CallFromC(self->opt_.who.c_str(), where, [&] {
		if (self->ac_ == c)
			f(self);
	});
}

void
HiredisLink::OnConnect(const redisAsyncContext *c, int status) noexcept
{
	ForLive(c, "connect", [&](HiredisLink *self) {
		if (status != REDIS_OK) {
			self->ac_ = nullptr; // hiredis frees a context whose connect failed
			self->Gone(c->errstr);
			return;
		}
		if (self->opt_.keepalive && !self->route_.Asking() && self->route_.Next().unix_socket.empty())
			redisEnableKeepAlive(&self->ac_->c);
		self->deadline_ = 0; // the handshake has a deadline of its own
		self->Await("connect");
		self->Handshake();
	});
}

void
HiredisLink::OnDisconnect(const redisAsyncContext *c, int status) noexcept
{
	ForLive(c, "disconnect", [&](HiredisLink *self) {
		self->ac_ = nullptr;
		self->Gone(status == REDIS_OK ? (self->drop_reason_.empty() ? "closed" : self->drop_reason_)
		                              : std::string(c->errstr));
	});
}

// Handshake pipelines the route's commands (the sentinel query while asking; else AUTH, SELECT and
// ROLE when the address came from a sentinel, which may be stale), then CLIENT SETNAME and the
// owner's tail; the last reply ends it.
void
HiredisLink::Handshake()
{
	state_ = State::Handshaking;
	std::vector<std::vector<std::string>> cmds = route_.Commands();
	if (!route_.Asking()) {
		cmds.push_back({"CLIENT", "SETNAME", opt_.client_name});
		cmds.insert(cmds.end(), opt_.tail.begin(), opt_.tail.end());
	}
	for (size_t i = 0; i < cmds.size(); i++) {
		auto *step = new HandshakeStep{this, i + 1 == cmds.size(),
		                               cmds[i][0] == "CLIENT" ? "CLIENT " + cmds[i][1] : cmds[i][0]};
		if (!Send(cmds[i], OnHandshakeReply, step)) {
			delete step;
			Drop("command not accepted");
			return;
		}
	}
}

void
HiredisLink::OnHandshakeReply(redisAsyncContext *c, void *r, void *privdata) noexcept
{
	std::unique_ptr<HandshakeStep> step(static_cast<HandshakeStep *>(privdata));
	HiredisLink *self = step->owner;
	CallFromC(self->opt_.who.c_str(), "handshake", [&] {
		if (!r || self->ac_ != c || self->state_ != State::Handshaking)
			return;
		self->HandshakeReply(*step, static_cast<const redisReply *>(r));
	});
}

void
HiredisLink::HandshakeReply(const HandshakeStep &step, const redisReply *reply)
{
	bool asking = route_.Asking();
	// The sentinel's answer to the last command of its query is Found's to judge, even an error.
	if (reply->type == REDIS_REPLY_ERROR && !(asking && step.last)) {
		std::string why = (asking ? "sentinel " : "") + step.what + " failed: " + std::string(reply->str, reply->len);
		if (!asking)
			Log(Level::Debug, "%s: %s", opt_.who.c_str(), why.c_str());
		Drop(why);
		return;
	}
	if (step.what == "ROLE" && !route_.RoleOk(ConvertReply(reply))) {
		Drop("ROLE: " + route_.Master() + " is not the master (yet)");
		return;
	}
	if (!step.last)
		return;
	if (asking) {
		std::string why, notice;
		if (!route_.Found(ConvertReply(reply), &why, &notice)) {
			Drop(why);
			return;
		}
		if (!notice.empty())
			Log(Level::Notice, "%s: %s", opt_.who.c_str(), notice.c_str());
		switching_ = true;
		Drop("connecting to the master");
		return;
	}
	state_ = State::Up;
	deadline_ = 0;
	if (up_)
		up_(ConvertReply(reply));
}

bool
HiredisLink::Send(const std::vector<std::string> &argv, redisCallbackFn *fn, void *privdata)
{
	if (!ac_)
		return false;
	chat_outbox::RedisArgv args(argv); // not const: hiredis 0.14 takes const char ** (pointers it may not be given as const)
	return redisAsyncCommandArgv(ac_, fn, privdata, args.Count(), args.ptrs.data(), args.lens.data()) == REDIS_OK;
}

void
HiredisLink::Await(const char *what, const char *hint)
{
	if (deadline_)
		return;
	deadline_ = uv_now(loop_) + static_cast<uint64_t>(opt_.timeout_ms);
	deadline_what_ = what;
	deadline_hint_ = hint;
}

void
HiredisLink::Recovered(const std::string &detail)
{
	deadline_ = 0;
	backoff_.Reset();
	if (lost_)
		Reconnects().redis++;
	worked_ = true;
	lost_ = false;
	if (opt_.state_log)
		opt_.state_log->Up(detail);
	else
		Log(Level::Verbose, "%s: connected", opt_.who.c_str());
}

// Gone records a lost connection (the context is already gone or going) and plans a retry: at once
// when the sentinel's context was closed to connect to the master, else with backoff.
void
HiredisLink::Gone(const std::string &why)
{
	ac_ = nullptr;
	deadline_ = 0;
	moved_.clear();
	if (state_ == State::Closed)
		return;
	state_ = State::Down;
	if (down_)
		down_(why);
	if (state_ == State::Closed) // down may have closed us
		return;
	if (switching_) {
		switching_ = false;
		retry_timer_.Start(0, [this] { Connect(); });
		return;
	}
	route_.Lost();
	lost_ = worked_; // a connection that never worked is not a reconnect when it does
	if (opt_.state_log)
		opt_.state_log->Down(why);
	else if (backoff_.Failures() == 0)
		Log(Level::Verbose, "%s: %s (reconnecting)", opt_.who.c_str(), why.c_str());
	retry_timer_.Start(static_cast<uint64_t>(backoff_.Next()), [this] { Connect(); });
}

void
HiredisLink::Drop(const std::string &why)
{
	if (!ac_)
		return;
	drop_reason_ = why;
	redisAsyncContext *c = ac_;
	redisAsyncFree(c); // runs OnDisconnect if it was connected (then ac_ is already null)
	if (ac_ == c) {
		ac_ = nullptr;
		Gone(why);
	}
	drop_reason_.clear();
}

void
HiredisLink::CommandError(const std::string &error)
{
	if (route_.Watching() && SentinelRoute::MasterMovedError(error))
		MasterMoved(route_.Master() + " answered " + error.substr(0, error.find(' ')));
}

// MasterMoved: the live context is not on the master any more; it is dropped at the next tick,
// outside the hiredis reply handler that told us.
void
HiredisLink::MasterMoved(const std::string &why)
{
	if (!ac_ || !moved_.empty())
		return;
	moved_ = why;
	Log(Level::Notice, "%s: %s, asking the sentinels again", opt_.who.c_str(), why.c_str());
}

void
HiredisLink::Watchdog()
{
	if (ac_ && !moved_.empty())
		Drop("the master moved (" + moved_ + ")");
	if (ac_ && deadline_ && uv_now(loop_) > deadline_)
		Drop(deadline_what_ + " timed out" + (deadline_hint_ ? std::string(" ") + deadline_hint_ : std::string()));
	if (tick_ && state_ != State::Closed)
		tick_();
}

void
HiredisLink::Shut()
{
	if (state_ == State::Closed)
		return;
	state_ = State::Closed;
	deadline_ = 0;
	if (watch_id_) {
		opt_.watchers->Unsubscribe(watch_id_);
		watch_id_ = 0;
	}
	if (ac_) {
		drop_reason_ = "closing";
		redisAsyncContext *c = ac_;
		ac_ = nullptr;
		redisAsyncFree(c);
	}
}

void
HiredisLink::Close(std::function<void()> done)
{
	Shut();
	CloseAll(std::move(done), retry_timer_, watchdog_);
}

} // namespace chat_outboxd
