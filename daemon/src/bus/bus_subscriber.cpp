// daemon/src/bus/bus_subscriber.cpp - see bus_subscriber.hpp.
#include "bus/bus_subscriber.hpp"

#include "base/log.hpp"
#include "base/uv_handle.hpp"
#include "base/wall_clock.hpp"
#include "bus/core/bus_codec.hpp"
#include "inbox/core/inbox_row.hpp"
#include "inbox/core/inbox_sql.hpp"
#include "net/redis_subscriber.hpp"

namespace chat_outboxd {

BusSubscriber::BusSubscriber(uv_loop_t *loop, const Config &cfg, BusSink &sink, PgClient &pg, InboxSchema &schema, Metrics &metrics,
                             BusMetrics &bus_metrics)
    : loop_(loop), cfg_(cfg), sink_(sink), pg_(pg), schema_(schema), metrics_(metrics), bus_metrics_(bus_metrics),
      fill_timer_(loop, "bus fill"), quiet_timer_(loop, "bus quiet check"), alive_(std::make_shared<BusSubscriber *>(this))
{
	const std::string inbox = QuoteIdent(cfg.service) + ".inbox";
	sql_high_ = InboxHighWaterSql(cfg.service);
	for (bool with_sender : {false, true})
		sql_fill_[with_sender] = "SELECT " + InboxRowColumns(with_sender) + " FROM " + inbox +
		                         " WHERE seq OPERATOR(pg_catalog.>) $1::bigint AND seq OPERATOR(pg_catalog.<=) $2::bigint"
		                         " ORDER BY seq LIMIT " +
		                         std::to_string(kFillPage);
}

BusSubscriber::~BusSubscriber() = default;

void
BusSubscriber::Start(RedisSubscriber &sub, const std::string &channel, bool redis_health)
{
	channel_ = channel;
	redis_health_ = redis_health;
	sub_ = &sub;
	sub_->Subscribe(
	    channel_, [this](const std::string &, const std::string &payload) { OnMessage(payload); },
	    [this] { OnSubscribed(); });
	quiet_timer_.Start(
	    kQuietCheckMs, [this] { OnQuietTick(); }, kQuietCheckMs);
	CheckInbox(); // the start of the order, even while Redis is away
}

void
BusSubscriber::Own(std::vector<InboxMessage> rows)
{
	Hand(order_.Offer(std::move(rows), Now()));
}

void
BusSubscriber::OnMessage(const std::string &payload)
{
	heard_ = true;
	bus_metrics_.received++;
	auto p = DecodeBus(payload);
	if (!p) {
		if (bus_metrics_.malformed++ == 0)
			Log(Level::Warning, "bus: a message on %s is not ours (ignored; the inbox is read instead)",
			    channel_.c_str());
		CheckInbox();
		return;
	}
	int64_t lag_ms = WallMs() - p->published_ms;
	bus_metrics_.lag_seconds.Observe(lag_ms > 0 ? static_cast<double>(lag_ms) / 1000.0 : 0.0);
	std::vector<InboxMessage> rows;
	for (BusEntry &e : p->entries) {
		if (e.notice)
			order_.Notice(e.message.seq, Now());
		else
			rows.push_back(std::move(e.message));
	}
	Hand(order_.Offer(std::move(rows), Now()));
}

void
BusSubscriber::OnSubscribed()
{
	UpdateSubscribed();
	// Whatever was published while we were not subscribed is only in the inbox now.
	CheckInbox();
}

void
BusSubscriber::UpdateSubscribed()
{
	bool subscribed = sub_ && sub_->Subscribed(channel_);
	bus_metrics_.subscribed = subscribed;
	if (redis_health_)
		metrics_.redis_up = subscribed;
}

void
BusSubscriber::OnQuietTick()
{
	UpdateSubscribed();
	if (!heard_ || order_.GetState() == BusOrder::State::Waiting)
		CheckInbox();
	heard_ = false;
}

void
BusSubscriber::CheckInbox()
{
	if (checking_ || closed_)
		return;
	checking_ = true;
	std::weak_ptr<BusSubscriber *> alive = alive_;
	pg_.Query(sql_high_, {}, [this, alive](PgResult &&r) {
		if (alive.expired())
			return;
		checking_ = false;
		int64_t high = 0;
		if (closed_)
			return;
		if (!r.ok || r.rows.empty() || r.rows[0].empty() || !ReadInt64(r.rows[0][0], &high)) {
			// The next quiet tick asks again (PgClient logs an outage itself); before the start, sooner.
			if (order_.GetState() == BusOrder::State::Waiting)
				fill_timer_.Start(static_cast<uint64_t>(start_retry_.Next()), [this] { CheckInbox(); });
			return;
		}
		start_retry_.Reset();
		// The first answer starts the order: everything up to high is history, so a new client's pid
		// resumes from there (Hub::HighSeq). Later answers are not BusSink::SeenSeq: the seq a pid carries
		// is what was handed on, so a client that connects while a fill is out resumes from before the
		// rows it brings.
		if (order_.GetState() == BusOrder::State::Waiting)
			sink_.SeenSeq(high);
		Hand(order_.Start(high, Now()));
	});
}

void
BusSubscriber::PostgresUp()
{
	if (closed_ || !fill_retry_.Failing())
		return;
	order_.RetryNow(Now());
	Pump();
}

void
BusSubscriber::Hand(std::vector<InboxMessage> rows)
{
	schema_.SawSenders(rows); // the catch-up, history and fills after these read senders too
	if (!rows.empty() && !closed_)
		sink_.Deliver(rows);
	Pump();
}

void
BusSubscriber::Pump()
{
	if (closed_)
		return;
	if (auto fill = order_.TakeFill(Now())) {
		fill_timer_.Stop();
		RunFill(*fill);
		return;
	}
	if (auto at = order_.DueAt()) {
		int64_t wait = *at - Now();
		fill_timer_.Start(static_cast<uint64_t>(wait > 0 ? wait : 0), [this] { Pump(); });
	}
}

void
BusSubscriber::RunFill(const BusOrder::Fill &fill)
{
	bus_metrics_.fills++;
	Log(Level::Debug, "bus: reading seq %lld..%lld from the inbox", static_cast<long long>(fill.after + 1),
	    static_cast<long long>(fill.upto));
	bus_metrics_.buffer_overflows = order_.Overflows();
	std::weak_ptr<BusSubscriber *> alive = alive_;
	schema_.Ready([this, alive, fill] {
		if (alive.expired() || closed_)
			return;
		PgParams params{std::to_string(fill.after), std::to_string(fill.upto)};
		pg_.Query(sql_fill_[schema_.HasSender()], std::move(params),
		          [this, alive, fill, check = schema_.Checker()](PgResult &&r) {
			check(r);
			if (!alive.expired() && !closed_)
				FillAnswered(fill, std::move(r));
		});
	});
}

void
BusSubscriber::FillAnswered(const BusOrder::Fill &fill, PgResult &&r)
{
	if (!r.ok) {
		if (!fill_retry_.Failing())
			Log(Level::Warning,
			    "bus: reading seq %lld..%lld from the inbox failed: %s (retrying from %lld ms, doubling up to %lld ms)",
			    static_cast<long long>(fill.after + 1), static_cast<long long>(fill.upto), r.error.c_str(),
			    static_cast<long long>(kFillRetryMs), static_cast<long long>(kFillRetryMaxMs));
		order_.FillFailed(Now(), fill_retry_.Next());
		Pump();
		return;
	}
	std::vector<InboxMessage> rows;
	for (auto &row : r.rows) {
		InboxMessage m;
		if (ReadInboxRow(row, &m))
			rows.push_back(std::move(m));
	}
	if (fill_retry_.Failing())
		Log(Level::Notice, "bus: reading from the inbox again");
	fill_retry_.Reset();
	bool complete = static_cast<int64_t>(r.rows.size()) < kFillPage;
	bus_metrics_.fill_rows += rows.size();
	Hand(order_.Filled(fill, std::move(rows), complete, Now()));
}

void
BusSubscriber::Close(std::function<void()> done)
{
	closed_ = true;
	if (sub_)
		sub_->Unsubscribe(channel_);
	CloseAll(std::move(done), fill_timer_, quiet_timer_);
}

} // namespace chat_outboxd
