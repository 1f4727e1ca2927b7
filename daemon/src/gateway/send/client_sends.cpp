// daemon/src/gateway/send/client_sends.cpp - see client_sends.hpp.
#include "gateway/send/client_sends.hpp"

#include "gateway/client/core/message_json.hpp"
#include "gateway/hub/hub.hpp"
#include "gateway/hub/query_queue.hpp"
#include "gateway/send/core/client_msg_id.hpp"
#include "inbox/core/inbox_row.hpp"
#include "inbox/core/inbox_sql.hpp"
#include "inbox/core/uuid.hpp"

namespace chat_outboxd {

ClientSends::ClientSends(Hub &hub, QueryQueue &queries, const Config &cfg) : hub_(hub), queries_(queries), cfg_(cfg)
{
	const std::string head = std::string("SELECT id, chat_id, body, ") + kCreatedAtSql + ", ";
	// --authz membership: chat_outbox.check_member locks the sender's membership row (FOR KEY SHARE) in
	// the send's own transaction, so a remove_member racing it commits after the message, or commits
	// first and the send is refused with nothing written (sql/parts/members.sql)
	const std::string chat = cfg.authz == "membership"
	                             ? "CASE WHEN chat_outbox.check_member($1::bigint, $3::text) THEN $1::bigint END"
	                             : "$1::bigint";
	sql_send_[true] = head + "sender FROM " + QuoteIdent(cfg.service) + ".send_message(" + chat + ", $2::text, $3::text)";
	sql_send_[false] = head + "NULL::pg_catalog.text AS sender FROM " + QuoteIdent(cfg.service) +
	                   ".send_message($1::bigint, $2::text)";
	// send_message marks a repeat in the transaction-local setting chat_outbox_send.repeat (the
	// message's id); the function scan runs before the select list reads it
	sql_send_keyed_ = head + "sender, pg_catalog.current_setting('chat_outbox_send.repeat', true) "
	                         "OPERATOR(pg_catalog.=) id::pg_catalog.text FROM " +
	                  QuoteIdent(cfg.service) + ".send_message(" + chat + ", $2::text, $3::text, $4::text)";
	const std::string changed = head + "sender, pg_catalog.to_json(edited_at) OPERATOR(pg_catalog.#>>) '{}', "
	                                   "pg_catalog.to_json(deleted_at) OPERATOR(pg_catalog.#>>) '{}' FROM " +
	                            QuoteIdent(cfg.service);
	// --authz membership: an edit or delete locks the author's membership of the message's chat the same
	// way, in its own statement, before edit_message locks the message. A message this service does not
	// have passes the check unchanged, so edit_message answers it as unknown (P0002), as in token mode.
	auto message = [&cfg](const char *sender) {
		if (cfg.authz != "membership")
			return std::string("$1::pg_catalog.uuid");
		return std::string("CASE WHEN (SELECT chat_outbox.check_member(m.chat_id, ") + sender + "::text) FROM " +
		       QuoteIdent(cfg.service) + ".messages m WHERE m.id OPERATOR(pg_catalog.=) $1::pg_catalog.uuid) IS NOT FALSE "
		                                 "THEN $1::pg_catalog.uuid END";
	};
	sql_edit_ = changed + ".edit_message(" + message("$3") + ", $2::text, $3::text)";
	sql_delete_ = changed + ".delete_message(" + message("$2") + ", $2::text)";
}

std::optional<nlohmann::json>
ClientSends::ChangeRefusal(Client &c, const std::string &message_id, const std::string *body)
{
	std::optional<nlohmann::json> err;
	if (c.sub.empty())
		err = nlohmann::json::object({{"message", "forbidden"}, {"detail", "only a token with a sub may edit or delete"}});
	else if (!IsUuid(message_id))
		err = nlohmann::json::object({{"code", "bad_request"}, {"message", "message_id must be a message's uuid"}});
	else if (body && body->find('\0') != std::string::npos)
		err = nlohmann::json::object({{"code", "invalid_body"}, {"message", "body must not contain a NUL character (U+0000)"}});
	else
		err = Throttled(c);
	if (err)
		hub_.CountSend(false);
	return err;
}

void
ClientSends::Edit(std::string message_id, std::string body, const std::string &sender, std::function<void(nlohmann::json)> done)
{
	queries_.Run(sql_edit_, {std::move(message_id), std::move(body), sender}, Answer(std::move(done)));
}

void
ClientSends::Delete(std::string message_id, const std::string &sender, std::function<void(nlohmann::json)> done)
{
	queries_.Run(sql_delete_, {std::move(message_id), sender}, Answer(std::move(done)));
}

std::optional<nlohmann::json>
ClientSends::Refusal(Client &c, int64_t chat_id, const std::string &body, const std::optional<std::string> &client_msg_id)
{
	// Checked in this order: what is wrong with the request itself first, then what may pass later.
	std::optional<nlohmann::json> err;
	std::optional<std::string> bad_key = client_msg_id ? ClientMsgIdError(*client_msg_id) : std::nullopt;
	if (body.find('\0') != std::string::npos) {
		// A text value cannot hold U+0000; libpq would cut the body at it and store the rest.
		err = nlohmann::json::object({{"code", "invalid_body"}, {"message", "body must not contain a NUL character (U+0000)"}});
	} else if (bad_key) {
		err = nlohmann::json::object({{"code", "invalid_client_msg_id"}, {"message", *bad_key}});
	} else if (client_msg_id && c.sub.empty()) {
		// without a sub every such client would share one key space: one could be answered with another's message
		err = nlohmann::json::object({{"code", "invalid_client_msg_id"}, {"message", "client_msg_id needs a token with a sub"}});
	} else if (!hub_.Allowed(c, chat_id)) {
		err = nlohmann::json::object({{"message", "forbidden"}});
	} else {
		err = Throttled(c);
	}
	if (err)
		hub_.CountSend(false);
	return err;
}

std::optional<nlohmann::json>
ClientSends::Throttled(Client &c)
{
	if (!c.sends.Take(hub_.NowMs(), cfg_.send_rate, cfg_.send_burst)) {
		hub_.CountSendLimited();
		return nlohmann::json::object({{"code", "rate_limited"},
		                               {"message", "more than " + std::to_string(cfg_.send_rate) + " sends per second; retry later"},
		                               {"retry_after_ms", c.sends.RetryAfterMs(cfg_.send_rate)}});
	}
	if (queries_.Full())
		return nlohmann::json::object({{"code", "busy"}, {"message", "too many queries waiting for the database; retry later"}});
	return std::nullopt;
}

void
ClientSends::Send(int64_t chat_id, std::string body, const std::string &sender, std::function<void(nlohmann::json)> done,
                  std::optional<std::string> client_msg_id)
{
	// The author is who the token says, never what the client sends; send_message checks it like any input.
	std::optional<std::string> author;
	if (!sender.empty())
		author = sender;
	if (client_msg_id) {
		// Refusal saw a sub. Only 1.6's send_message takes the key: against an older database the call
		// fails (42883) and the client learns it from the error, never a message stored without it.
		PgParams params{std::to_string(chat_id), std::move(body), std::move(author), *client_msg_id};
		queries_.Run(sql_send_keyed_, std::move(params), Answer(std::move(done), std::move(client_msg_id)));
		return;
	}
	auto params = [chat_id, body = std::move(body), author = std::move(author)](bool with_sender) mutable {
		PgParams p{std::to_string(chat_id), std::move(body)};
		if (with_sender)
			p.push_back(std::move(author));
		return p;
	};
	queries_.RunBySchema(sql_send_, std::move(params), Answer(std::move(done)));
}

std::function<void(PgResult &&)>
ClientSends::Answer(std::function<void(nlohmann::json)> done, std::optional<std::string> client_msg_id)
{
	return [this, done = std::move(done), client_msg_id = std::move(client_msg_id)](PgResult &&r) {
		int64_t chat_id = 0;
		if (r.ok && !r.rows.empty() && r.rows[0].size() >= 5 && r.rows[0][0] && r.rows[0][1] &&
		    ReadInt64(r.rows[0][1], &chat_id)) {
			hub_.CountSend(true);
			const auto &row = r.rows[0];
			nlohmann::json msg = {{"id", *row[0]}, {"chat_id", chat_id}, {"body", row[2].value_or("")}};
			msg["created_at"] = row[3] ? nlohmann::json(*row[3]) : nlohmann::json(nullptr);
			msg["sender"] = row[4] ? nlohmann::json(*row[4]) : nlohmann::json(nullptr);
			if (row.size() >= 7)
				AddChangeFields(msg, row[5].value_or(""), row[6].value_or(""));
			bool repeat = false;
			if (client_msg_id) {
				msg["client_msg_id"] = *client_msg_id;
				repeat = row.size() >= 6 && row[5] && *row[5] == "t";
			}
			// a repeat's `sent` goes out again: the first one's may have been lost with its gateway
			// (killed between the COMMIT and the ack); clients keep one message per id
			if (on_sent_)
				on_sent_(msg);
			nlohmann::json answer = {{"ok", true}, {"message", std::move(msg)}};
			if (repeat)
				answer["repeat"] = true;
			done(std::move(answer));
			return;
		}
		hub_.CountSend(false);
		nlohmann::json err = {{"message", r.ok ? "the function returned no row" : r.error}};
		if (r.connection_lost && r.sqlstate.empty())
			err["message"] = "database unavailable; the message may or may not have been stored";
		if (r.sqlstate == kClientMsgIdConflict)
			err["code"] = "client_msg_id_conflict";
		err["sqlstate"] = r.sqlstate.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.sqlstate);
		err["detail"] = r.detail.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.detail);
		err["hint"] = r.hint.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.hint);
		done({{"ok", false}, {"error", std::move(err)}});
	};
}

} // namespace chat_outboxd
