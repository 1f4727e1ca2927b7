// daemon/src/inbox/inbox_schema.cpp - see inbox_schema.hpp.
#include "inbox/inbox_schema.hpp"

#include "base/log.hpp"
#include "inbox/core/inbox_sql.hpp"

namespace chat_outboxd {

InboxSchema::InboxSchema(PgClient &pg, const std::string &service)
    : pg_(pg), sql_(InboxSenderColumnSql()), table_(QuoteIdent(service) + ".inbox"),
      alive_(std::make_shared<InboxSchema *>(this))
{
}

void
InboxSchema::Ready(std::function<void()> then)
{
	const bool current =
	    known_ && (has_sender_ || std::chrono::steady_clock::now() - asked_at_ < kRecheck);
	if (current && !asking_) {
		then();
		return;
	}
	waiting_.push_back(std::move(then));
	if (asking_)
		return;
	asking_ = true;
	asked_at_ = std::chrono::steady_clock::now();
	std::weak_ptr<InboxSchema *> alive = alive_;
	pg_.Query(sql_, {table_}, [alive](PgResult &&r) {
		if (auto self = alive.lock())
			(*self)->Answered(std::move(r));
	});
}

void
InboxSchema::Answered(PgResult &&r)
{
	asking_ = false;
	if (r.ok && r.rows.size() == 1 && r.rows[0].size() == 1 && r.rows[0][0]) {
		const bool has = *r.rows[0][0] == "t";
		if (has != has_sender_ || !known_)
			Log(has ? Level::Verbose : Level::Notice, "%s %s", table_.c_str(),
			    has ? "has the sender column (chat_outbox 1.1)"
			        : "has no sender column (chat_outbox 1.0): messages are stored and shown without senders until "
			          "it is updated");
		has_sender_ = has;
		known_ = true;
	}
	auto waiting = std::move(waiting_);
	waiting_.clear();
	for (auto &then : waiting)
		then();
}

void
InboxSchema::Forget()
{
	known_ = false;
}

std::function<void(const PgResult &)>
InboxSchema::Checker() const
{
	std::weak_ptr<InboxSchema *> alive = alive_;
	return [alive](const PgResult &r) {
		if (r.ok || !UndefinedColumn(r.sqlstate))
			return;
		if (auto self = alive.lock())
			(*self)->Forget();
	};
}

} // namespace chat_outboxd
