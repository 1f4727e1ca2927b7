// daemon/src/inbox/core/inbox_sql.cpp - see inbox_sql.hpp.
#include "inbox/core/inbox_sql.hpp"

#include <cstdlib>

namespace chat_outboxd {

std::string
QuoteIdent(const std::string &name)
{
	std::string out = "\"";
	for (char c : name) {
		if (c == '"')
			out += "\"\"";
		else
			out.push_back(c);
	}
	return out + "\"";
}

std::string
PgArrayLiteral(const std::vector<std::optional<std::string>> &items)
{
	std::string out = "{";
	for (size_t i = 0; i < items.size(); i++) {
		if (i)
			out.push_back(',');
		if (!items[i]) {
			out += "NULL";
			continue;
		}
		// Always quoted, so "NULL", empty strings, commas and braces in bodies stay plain text.
		out.push_back('"');
		for (char c : *items[i]) {
			if (c == '"' || c == '\\')
				out.push_back('\\');
			out.push_back(c);
		}
		out.push_back('"');
	}
	return out + "}";
}

namespace {

// kOthersPerWrite and kOthersBytesPerWrite bound the rows of other writers one write returns (the
// row that crosses the byte bound is the last); the rest come with the next write. The byte bound
// keeps the daemon's memory small when another writer committed many large messages.
constexpr int kOthersPerWrite = 10000;
constexpr int64_t kOthersBytesPerWrite = 1 << 20;

// The SELECT list, one entry per InboxColumn in its order: the expression for a message of the batch
// (i = input, ins = what this statement inserted, e = the row that was already there) and for a row
// of another writer (o). `since_1_1`: a column chat_outbox 1.0's inbox lacks, read as NULL there.
struct ColumnSql {
	InboxColumn column;
	const char *batch;
	const char *other;
	bool since_1_1 = false;
};

// An inserted row reads as the insert returned it (inbox_apply may have changed it), an existing one as it was.
#define CHAT_OUTBOXD_ROW(col) "CASE WHEN ins.seq IS NULL THEN e." col " ELSE ins." col " END"
#define CHAT_OUTBOXD_ISO(col) "pg_catalog.to_json(" col ") OPERATOR(pg_catalog.#>>) '{}'"

constexpr ColumnSql kColumns[] = {
    {kInboxSeq, "coalesce(ins.seq, e.seq)", "o.seq"},
    {kInboxId, "i.message_id::pg_catalog.text", "o.message_id::pg_catalog.text"},
    {kInboxChatId, CHAT_OUTBOXD_ROW("chat_id"), "o.chat_id"},
    {kInboxBody, CHAT_OUTBOXD_ROW("body"), "o.body"},
    {kInboxCreatedIso, CHAT_OUTBOXD_ISO(CHAT_OUTBOXD_ROW("created_at")), CHAT_OUTBOXD_ISO("o.created_at")},
    {kInboxSender, CHAT_OUTBOXD_ROW("sender"), "o.sender", true},
    {kInboxTarget, CHAT_OUTBOXD_ROW("target") "::pg_catalog.text", "o.target::pg_catalog.text", true},
    {kInboxChange, CHAT_OUTBOXD_ROW("kind"), "o.kind", true},
    {kInboxEditedAt, CHAT_OUTBOXD_ISO(CHAT_OUTBOXD_ROW("edited_at")), CHAT_OUTBOXD_ISO("o.edited_at"), true},
    {kInboxDeletedAt, CHAT_OUTBOXD_ISO(CHAT_OUTBOXD_ROW("deleted_at")), CHAT_OUTBOXD_ISO("o.deleted_at"), true},
    {kInboxCreatedEpoch, "EXTRACT(epoch FROM " CHAT_OUTBOXD_ROW("created_at") ")::pg_catalog.float8",
     "EXTRACT(epoch FROM o.created_at)::pg_catalog.float8"},
    {kInboxKind, "CASE WHEN ins.seq IS NULL THEN 'e' ELSE 'n' END", "'o'"},
};
#undef CHAT_OUTBOXD_ROW
#undef CHAT_OUTBOXD_ISO
static_assert(sizeof kColumns / sizeof kColumns[0] == kInboxColumnCount, "one SELECT entry per InboxColumn");

constexpr bool
InColumnOrder()
{
	for (size_t i = 0; i < kInboxColumnCount; i++)
		if (kColumns[i].column != i)
			return false;
	return true;
}
static_assert(InColumnOrder(), "kColumns lists the InboxColumn values in order");

std::string
SelectList(bool batch, bool with_sender)
{
	std::string out;
	for (size_t i = 0; i < kInboxColumnCount; i++) {
		out += i ? ", " : " ";
		out += kColumns[i].since_1_1 && !with_sender ? "NULL::pg_catalog.text"
		       : batch                               ? kColumns[i].batch
		                                             : kColumns[i].other;
		if (i == kInboxSeq)
			out += " AS seq";
	}
	return out;
}

// Staged: the write's value n (InboxStageSql) as type: a scalar subquery, so its text is read and
// cast once per statement, not once per row that uses it.
std::string
Staged(int n, const char *type)
{
	return "(SELECT CASE WHEN v OPERATOR(pg_catalog.=) '' THEN NULL ELSE v::pg_catalog." + std::string(type) +
	       " END FROM pg_catalog.current_setting('" + InboxStagedName(n) + "') v)";
}

} // namespace

std::string
InboxStagedName(int n)
{
	return "chat_outboxd.inbox_" + std::to_string(n);
}

std::string
InboxStageSql()
{
	std::string sql = "SELECT pg_catalog.set_config('enable_seqscan', 'off', true), "
	                  "pg_catalog.set_config('plan_cache_mode', 'force_generic_plan', true), "
	                  "pg_catalog.set_config('tcp_user_timeout', $1, true)";
	for (int n = 1; n <= kInboxValues; n++)
		sql += ", pg_catalog.set_config('" + InboxStagedName(n) + "', $" + std::to_string(n + 1) + ", true)";
	return sql;
}

std::vector<std::optional<std::string>>
InboxStageParams(int64_t stall_timeout_ms, std::vector<std::optional<std::string>> &&values)
{
	std::vector<std::optional<std::string>> params{std::to_string(stall_timeout_ms)};
	for (auto &v : values)
		params.emplace_back(v ? std::move(*v) : std::string()); // Staged reads '' back as NULL
	return params;
}

std::string
InboxLockSql()
{
	return "SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1::pg_catalog.text))";
}

std::string
InboxLockKey(const std::string &service)
{
	return "chat_outbox.inbox:" + service;
}

std::string
InboxSenderColumnSql()
{
	// sender and target came in 1.1 together (an unreleased 1.1 had only sender: it reads as 1.0)
	return "SELECT pg_catalog.count(*) OPERATOR(pg_catalog.=) 2 FROM pg_catalog.pg_attribute a WHERE a.attrelid "
	       "OPERATOR(pg_catalog.=) pg_catalog.to_regclass($1::pg_catalog.text) AND a.attname OPERATOR(pg_catalog.=) "
	       "ANY ('{sender,target}'::pg_catalog.text[]) AND NOT a.attisdropped";
}

std::string
InboxHighWaterSql(const std::string &service)
{
	return "SELECT coalesce(pg_catalog.max(seq), 0) FROM " + QuoteIdent(service) + ".inbox";
}

std::string
InboxInsertSql(const std::string &service, bool with_sender)
{
	// Every distinct message of the batch comes back, inserted or not, with its seq: after a write
	// whose outcome was unknown (connection lost before the commit was confirmed), or when another
	// writer committed it, the consumer must still push the rows nobody pushed. An existing row is
	// read from the inbox (the statement's snapshot does not see what `ins` adds, so the two never
	// overlap), one index probe per message that was not inserted: the LATERAL subquery with its LIMIT
	// is planned as a lookup per row whose outer-only condition skips the probe for an inserted one,
	// never as a join that reads the whole inbox (a plan made on an inbox that looked empty:
	// InboxStageSql). Rows of other writers above value 5 come back too: nobody else pushes them to this
	// daemon's clients.
	const std::string inbox = QuoteIdent(service) + ".inbox";
	// the batch's columns, in the order of t(...): the staged value and its type
	static const std::pair<int, const char *> kColumnsIn[] = {{1, "uuid[]"}, {2, "int8[]"}, {3, "text[]"}, {4, "timestamptz[]"}, {6, "text[]"}, {7, "uuid[]"}, {8, "text[]"}, {9, "int4[]"}, {10, "timestamptz[]"}, {11, "timestamptz[]"}};
	std::string unnests;
	for (const auto &[n, type] : kColumnsIn)
		unnests += (unnests.empty() ? "" : ", ") + std::string("pg_catalog.unnest(") + Staged(n, type) + ")";
	return "WITH input AS ("
	       " SELECT DISTINCT ON (message_id) * FROM ROWS FROM (" +
	       unnests +
	       ") WITH ORDINALITY AS t(message_id, chat_id, body, created_at, sender, target, kind, version, edited_at,"
	       " deleted_at, ord)"
	       " ORDER BY message_id, ord"
	       "), ins AS ("
	       " INSERT INTO " +
	       inbox +
	       (with_sender ? " (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at, deleted_at)"
	                      " SELECT message_id, chat_id, body, created_at, sender, target, kind, version, edited_at,"
	                      " deleted_at FROM input ORDER BY ord"
	                      " ON CONFLICT (message_id) DO NOTHING"
	                      " RETURNING message_id, seq, chat_id, body, created_at, sender, target, kind, edited_at, deleted_at"
	                    : " (message_id, chat_id, body, created_at)"
	                      " SELECT message_id, chat_id, body, created_at FROM input WHERE kind IS NULL ORDER BY ord"
	                      " ON CONFLICT (message_id) DO NOTHING"
	                      " RETURNING message_id, seq, chat_id, body, created_at") +
	       ") SELECT" +
	       SelectList(true, with_sender) +
	       " FROM input i LEFT JOIN ins ON ins.message_id OPERATOR(pg_catalog.=) i.message_id"
	       " LEFT JOIN LATERAL (SELECT * FROM " +
	       inbox +
	       " x WHERE x.message_id OPERATOR(pg_catalog.=) i.message_id AND ins.message_id IS NULL LIMIT 1) e ON true"
	       " UNION ALL SELECT * FROM (SELECT" +
	       SelectList(false, with_sender) +
	       " FROM (SELECT q.*, pg_catalog.sum(pg_catalog.octet_length(q.body)) OVER (ORDER BY q.seq) AS run"
	       " FROM (SELECT * FROM " +
	       inbox +
	       " w WHERE w.seq OPERATOR(pg_catalog.>) " + Staged(5, "int8") +
	       " AND NOT w.message_id OPERATOR(pg_catalog.=) ANY (" + Staged(1, "uuid[]") +
	       "::pg_catalog.uuid[])" // an array, not ANY (subquery)
	       " ORDER BY w.seq LIMIT " +
	       std::to_string(kOthersPerWrite) +
	       ") q) o WHERE o.run OPERATOR(pg_catalog.-) pg_catalog.octet_length(o.body) OPERATOR(pg_catalog.<) " +
	       std::to_string(kOthersBytesPerWrite) +
	       " ORDER BY o.seq) others"
	       " ORDER BY seq";
}

int
InboxOthersPerWrite()
{
	return kOthersPerWrite;
}

int64_t
InboxOthersBytesPerWrite()
{
	return kOthersBytesPerWrite;
}

std::vector<std::optional<std::string>>
InboxInsertParams(const std::vector<ChatMessage> &messages, std::optional<int64_t> pushed_up_to)
{
	std::vector<std::optional<std::string>> ids, chats, bodies, created, senders, targets, kinds, versions, edited,
	    deleted;
	for (const auto &m : messages) {
		ids.emplace_back(m.id);
		chats.emplace_back(std::to_string(m.chat_id));
		bodies.emplace_back(m.body);
		created.push_back(m.created_at);
		senders.push_back(m.sender);
		const bool change = m.change != Change::None;
		targets.push_back(change ? std::optional<std::string>(m.target) : std::nullopt);
		kinds.push_back(!change ? std::nullopt : std::optional<std::string>(m.change == Change::Edited ? "edited" : "deleted"));
		versions.push_back(std::to_string(m.version));
		edited.push_back(m.change == Change::Edited ? m.changed_at : std::nullopt);
		deleted.push_back(m.change == Change::Deleted ? m.changed_at : std::nullopt);
	}
	std::optional<std::string> after;
	if (pushed_up_to)
		after = std::to_string(*pushed_up_to);
	return {PgArrayLiteral(ids), PgArrayLiteral(chats), PgArrayLiteral(bodies), PgArrayLiteral(created),
	        after, PgArrayLiteral(senders), PgArrayLiteral(targets), PgArrayLiteral(kinds),
	        PgArrayLiteral(versions), PgArrayLiteral(edited), PgArrayLiteral(deleted)};
}

bool
ParseInboxRows(PgRows &&rows, InboxRows *out, std::string *error)
{
	*out = InboxRows();
	for (auto &row : rows) {
		InboxMessage m;
		if (row.size() != kInboxColumnCount || !row[kInboxKind] || row[kInboxKind]->size() != 1 ||
		    !ReadInboxRow(row, &m)) {
			*error = "inbox insert returned a malformed row";
			return false;
		}
		switch (static_cast<InboxRowKind>((*row[kInboxKind])[0])) {
		case InboxRowKind::Inserted:
			out->inserted.push_back(std::move(m));
			out->created.push_back(row[kInboxCreatedEpoch]
			                           ? std::optional<double>(std::strtod(row[kInboxCreatedEpoch]->c_str(), nullptr))
			                           : std::nullopt);
			break;
		case InboxRowKind::Existing:
			out->existing.push_back(std::move(m));
			break;
		case InboxRowKind::Other:
			m.other_writer = true;
			out->others.push_back(std::move(m));
			break;
		default:
			*error = "inbox insert returned a row of unknown kind '" + *row[kInboxKind] + "'";
			return false;
		}
	}
	int64_t other_bytes = 0;
	for (const InboxMessage &m : out->others)
		other_bytes += static_cast<int64_t>(m.body.size());
	if (out->others.size() >= static_cast<size_t>(kOthersPerWrite) || other_bytes >= kOthersBytesPerWrite)
		out->read_up_to = out->others.back().seq;
	return true;
}

bool
InboxDataException(const std::string &sqlstate)
{
	return sqlstate.rfind("22", 0) == 0;
}

bool
InboxRowRefused(const std::string &sqlstate)
{
	return InboxDataException(sqlstate) || sqlstate.rfind("23", 0) == 0 || sqlstate.rfind("P0", 0) == 0;
}

void
InboxRows::Add(InboxRows &&more)
{
	for (auto &m : more.inserted)
		inserted.push_back(std::move(m));
	for (auto &c : more.created)
		created.push_back(c);
	for (auto &m : more.existing)
		existing.push_back(std::move(m));
	for (auto &m : more.others)
		others.push_back(std::move(m));
	if (more.read_up_to && (!read_up_to || *more.read_up_to < *read_up_to))
		read_up_to = more.read_up_to;
}

} // namespace chat_outboxd
