// daemon/src/inbox/inbox_schema.hpp - which version of <service>'s tables the daemon talks to: whether
// they have the columns of chat_outbox 1.1 (`sender`, and the edit columns: the inbox's `target` is
// looked for with it). A daemon of 1.1 runs against 1.0 tables too, so
// that it can be deployed before the database is updated, and takes the columns up without a restart
// once ALTER EXTENSION chat_outbox UPDATE (or the managed install's update_1.1.sql) has committed
// (docs/extension.md, 'Updating from 1.0'). Each connection that reads or writes the inbox has one.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "inbox/core/delivery.hpp"
#include "net/pg_client.hpp"

namespace chat_outboxd {

class InboxSchema {
  public:
	// While the column is missing it is looked for again at most this often.
	static constexpr std::chrono::seconds kRecheck{5};

	InboxSchema(PgClient &pg, const std::string &service);
	// Ready calls then() once the schema is known: at once when it was read and is current (found the
	// column, or looked for it less than kRecheck ago), else after one catalog query on this
	// connection. A failed query changes nothing (then() still runs; the next call asks again).
	void Ready(std::function<void()> then);
	// HasSender: the inbox and messages have `sender` and the edit columns (1.1). Until the first answer:
	// yes, the current version.
	bool HasSender() const { return has_sender_; }
	// Forget: a statement naming `sender` failed with undefined_column (42703): ask again next time.
	void Forget();
	// SawSenders: these messages carry senders, or are edits or deletes, which only a database of 1.1 sends. Without the column
	// known, it is asked for again at the next Ready, not kRecheck later: a sender is not dropped for
	// the seconds after an update, nor shown as null.
	template <typename Messages>
	void SawSenders(const Messages &messages)
	{
		if (has_sender_)
			return;
		for (const auto &m : messages)
			if (m.sender || m.change != Change::None) {
				known_ = false;
				return;
			}
	}
	// Checker returns what a query's callback calls with its result: Forget() on 42703, while this lives.
	std::function<void(const PgResult &)> Checker() const;

  private:
	void Answered(PgResult &&r);

	PgClient &pg_;
	const std::string sql_, table_;
	bool has_sender_ = true, known_ = false, asking_ = false;
	std::chrono::steady_clock::time_point asked_at_;
	std::vector<std::function<void()>> waiting_;
	std::shared_ptr<InboxSchema *> alive_; // the query's callback holds a weak_ptr: it may outlive this
};

// UndefinedColumn: the SQLSTATE a statement naming `sender` fails with against 1.0 tables.
inline bool
UndefinedColumn(const std::string &sqlstate)
{
	return sqlstate == "42703";
}

} // namespace chat_outboxd
