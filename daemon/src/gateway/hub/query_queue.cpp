// daemon/src/gateway/hub/query_queue.cpp - see query_queue.hpp.
#include "gateway/hub/query_queue.hpp"

namespace chat_outboxd {

QueryQueue::QueryQueue(PgClient &pg, const Config &cfg)
    : pg_(pg), cfg_(cfg), schema_(pg, cfg.service), alive_(std::make_shared<QueryQueue *>(this))
{
}

void
QueryQueue::Run(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb)
{
	out_++;
	Submit(sql, std::move(params), std::move(cb));
}

void
QueryQueue::RunFirst(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb)
{
	out_++;
	Submit(sql, std::move(params), std::move(cb), true);
}

void
QueryQueue::Submit(const std::string &sql, PgParams params, std::function<void(PgResult &&)> cb, bool first)
{
	std::weak_ptr<QueryQueue *> self_alive = alive_;
	auto answer = [this, self_alive, cb = std::move(cb)](PgResult &&r) {
		if (self_alive.expired())
			return;
		out_--;
		if (!r.ok && UndefinedColumn(r.sqlstate))
			schema_.Forget();
		cb(std::move(r));
		if (on_slot_free_)
			on_slot_free_();
	};
	if (first)
		pg_.QueryFirst(sql, std::move(params), std::move(answer));
	else
		pg_.Query(sql, std::move(params), std::move(answer));
}

void
QueryQueue::RunBySchema(const std::string (&sql)[2], std::function<PgParams(bool)> params,
                        std::function<void(PgResult &&)> cb)
{
	out_++;
	const std::string *texts = sql;
	schema_.Ready([this, texts, params = std::move(params), cb = std::move(cb)]() mutable {
		const bool has_sender = schema_.HasSender();
		Submit(texts[has_sender], params(has_sender), std::move(cb));
	});
}

void
QueryQueue::RunBySchema(const std::string (&sql)[2], PgParams params, std::function<void(PgResult &&)> cb)
{
	RunBySchema(
	    sql, [params = std::move(params)](bool) mutable { return std::move(params); }, std::move(cb));
}

} // namespace chat_outboxd
