// daemon/src/gateway/client_send.cpp - a client's send: <service>.send_message() on the gateway's own
// connection (autocommit, so the ack follows COMMIT and the outbox row is durable).
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

std::optional<nlohmann::json>
Gateway::Impl::SendRefusal(Client &c, int64_t chat_id, const std::string &body)
{
	// Checked in this order: what is wrong with the request itself first, then what may pass later.
	std::optional<nlohmann::json> err;
	if (body.find('\0') != std::string::npos) {
		// A text value cannot hold U+0000; libpq would cut the body at it and store the rest.
		err = nlohmann::json::object({{"code", "invalid_body"}, {"message", "body must not contain a NUL character (U+0000)"}});
	} else if (!Allowed(c, chat_id)) {
		err = nlohmann::json::object({{"message", "forbidden"}});
	} else if (!c.sends.Take(static_cast<int64_t>(uv_now(loop)), cfg.send_rate, cfg.send_burst)) {
		sends_limited++;
		err = nlohmann::json::object(
		    {{"code", "rate_limited"},
		     {"message", "more than " + std::to_string(cfg.send_rate) + " sends per second; retry later"},
		     {"retry_after_ms", c.sends.RetryAfterMs(cfg.send_rate)}});
	} else if (QueryQueueFull()) {
		err = nlohmann::json::object({{"code", "busy"}, {"message", "too many queries waiting for the database; retry later"}});
	}
	if (err)
		sends_failed++;
	return err;
}

void
Gateway::Impl::ClientSend(int64_t chat_id, std::string body, std::function<void(nlohmann::json)> done)
{
	RunQuery(sql_send, {std::to_string(chat_id), std::move(body)},
	         [this, chat_id, done = std::move(done)](PgResult &&r) {
		         if (r.ok && !r.rows.empty() && r.rows[0].size() >= 4 && r.rows[0][0]) {
			         sends_ok++;
			         const auto &row = r.rows[0];
			         nlohmann::json msg = {{"id", *row[0]}, {"chat_id", chat_id}, {"body", row[2].value_or("")}};
			         msg["created_at"] = row[3] ? nlohmann::json(*row[3]) : nlohmann::json(nullptr);
			         done({{"ok", true}, {"message", std::move(msg)}});
			         return;
		         }
		         sends_failed++;
		         nlohmann::json err = {{"message", r.ok ? "send_message returned no row" : r.error}};
		         if (r.connection_lost && r.sqlstate.empty())
			         err["message"] = "database unavailable; the message may or may not have been stored";
		         err["sqlstate"] = r.sqlstate.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.sqlstate);
		         err["detail"] = r.detail.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.detail);
		         err["hint"] = r.hint.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.hint);
		         done({{"ok", false}, {"error", std::move(err)}});
	         });
}

} // namespace chat_outboxd
