// daemon/src/gateway/client_send.cpp - a client's send: <service>.send_message() on the gateway's own
// connection (autocommit, so the ack follows COMMIT and the outbox row is durable).
#include "base/log.hpp"
#include "gateway/gateway_impl.hpp"

namespace chat_outboxd {

void
Gateway::Impl::ClientSend(int64_t chat_id, std::string body, std::function<void(nlohmann::json)> done)
{
	std::weak_ptr<Impl *> self_alive = alive;
	pg.Query(sql_send, {std::to_string(chat_id), std::move(body)},
	         [this, self_alive, chat_id, done = std::move(done)](PgResult &&r) {
		         if (self_alive.expired())
			         return;
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
