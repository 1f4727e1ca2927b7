// daemon/src/gateway/hub/hub_figures.cpp - the Hub's figures as /healthz (HealthJson) and /metrics
// (MetricsText) print them: the daemon's, the bus's and the gateway's own series, in one order.
#include "gateway/hub/hub.hpp"

#include <algorithm>

#include "common/process/prometheus_text.hpp"
#include "metrics/outbox_status.hpp"
#include "gateway/hub/query_queue.hpp"

namespace chat_outboxd {

using chat_outbox::MetricHeader;
using chat_outbox::MetricSample;

std::string
Hub::HealthJson(int *status) const
{
	bool servers = metrics.redis_up && metrics.postgres_up && !shutting_down;
	bool up = servers && Ready();
	*status = up ? 200 : 503;
	const char *state = up ? "ok" : servers ? "starting"
	                                        : "unavailable";
	return std::string("{\"status\":\"") + state + "\",\"redis\":" +
	       (metrics.redis_up ? "true" : "false") + ",\"postgres\":" + (metrics.postgres_up ? "true" : "false") +
	       ",\"clients\":" + std::to_string(client_count) + ",\"redis_appendfsync\":" +
	       (metrics.redis_appendfsync.empty() ? "null" : "\"" + metrics.redis_appendfsync + "\"") +
	       ",\"partitions\":" + metrics.PartitionsJson() + "}";
}

std::string
Hub::MetricsText() const
{
	std::string s;
	metrics.RenderJobs(&s);
	MetricSample(&s, "chat_outboxd_frames_rejected_total", "Malformed or oversized client frames.", "counter",
	             frames_rejected);
	MetricSample(&s, "chat_outboxd_clients_connected", "Connected clients.", "gauge", client_count);
	metrics.RenderServers(&s);
	bus_metrics.Render(&s);
	metrics.RenderPartitions(&s);
	auto sample = [&s](const char *name, const char *help, const char *type, uint64_t v) {
		MetricHeader(&s, name, help, type);
		s += std::string(name) + " " + std::to_string(v) + "\n";
	};
	auto counter = [&sample](const char *name, const char *help, uint64_t v) { sample(name, help, "counter", v); };
	auto gauge = [&sample](const char *name, const char *help, uint64_t v) { sample(name, help, "gauge", v); };
	counter("chat_outboxd_gateway_frames_pushed_total", "Message frames written to client sockets", frames_pushed);
	counter("chat_outboxd_gateway_catchups_total", "Catch-up replays run for reconnecting clients", catchup_runs);
	counter("chat_outboxd_gateway_catchup_messages_total", "Messages replayed by catch-up", catchup_messages);
	counter("chat_outboxd_gateway_catchup_reads_total", "Catch-up page queries, each read once for the clients of the same chats",
	        catchup_reads);
	counter("chat_outboxd_gateway_catchup_read_clients_total", "Clients served by those catch-up page queries",
	        catchup_read_clients);
	counter("chat_outboxd_gateway_chat_state_reads_total", "chat_state unread queries, each for the joins of one chat",
	        chat_state_reads);
	counter("chat_outboxd_gateway_chat_state_read_joins_total", "Joins served by those chat_state unread queries",
	        chat_state_read_joins);
	counter("chat_outboxd_gateway_sends_total", "Client sends stored by send_message", sends_ok);
	counter("chat_outboxd_gateway_send_errors_total", "Client sends refused or failed", sends_failed);
	counter("chat_outboxd_gateway_sends_rate_limited_total", "Client sends refused by --send-rate", sends_limited);
	counter("chat_outboxd_gateway_sessions_refused_total",
	        "Engine.IO handshakes refused by --max-unauthenticated(-per-address)", sessions_refused);
	counter("chat_outboxd_gateway_fell_behind_total",
	        "Times a client fell --client-queue-bytes behind and read on from the inbox", fell_behind);
	counter("chat_outboxd_gateway_clients_too_slow_total", "Clients closed for not reading their acks and pongs",
	        clients_too_slow);
	size_t buffered = 0, buffered_max = 0, engine_sessions = 0;
	for (const Endpoint *e : endpoints)
		e->ForEach([&](const Client &c) {
			buffered += c.Buffered();
			buffered_max = std::max(buffered_max, c.Buffered());
			engine_sessions += c.kind == Client::Kind::SocketIo;
		});
	gauge("chat_outboxd_gateway_buffered_bytes", "Bytes waiting for clients (queues and held live messages)", buffered);
	gauge("chat_outboxd_gateway_buffered_bytes_max", "Bytes waiting for the client that has the most", buffered_max);
	gauge("chat_outboxd_gateway_unauthenticated_sessions", "Engine.IO sessions without a namespace socket",
	      pending_total);
	gauge("chat_outboxd_gateway_queries_waiting", "Gateway queries waiting for Postgres (--query-queue)", queries.Waiting());
	gauge("chat_outboxd_gateway_engine_sessions", "Open Engine.IO sessions", engine_sessions);
	gauge("chat_outboxd_gateway_rooms", "Rooms with at least one member", rooms.RoomCount());
	if (membership) {
		gauge("chat_outboxd_gateway_users", "Users (token subs) with a connected client", user_clients.Users());
		gauge("chat_outboxd_gateway_membership_cache_users", "Users whose chats the membership cache holds",
		      membership->Users());
		gauge("chat_outboxd_gateway_membership_cache_bytes", "Bytes the membership cache holds (keys, chat ids, entries)",
		      membership->Bytes());
		counter("chat_outboxd_gateway_membership_reads_total", "Queries that read users' chats (up to 500 users each)",
		        membership->Reads());
	}
	conversation_counters.Render(&s);
	if (outbox_status)
		outbox_status->Render(&s);
	return s;
}

} // namespace chat_outboxd
