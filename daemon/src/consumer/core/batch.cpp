// daemon/src/consumer/core/batch.cpp - see batch.hpp.
#include "consumer/core/batch.hpp"

#include <set>

namespace chat_outboxd {

bool
Batch::AnyMessage() const
{
	for (const auto &bj : jobs)
		if (bj.msg)
			return true;
	return false;
}

bool
Batch::AnyBad() const
{
	for (const auto &bj : jobs)
		if (!bj.fail_reason.empty())
			return true;
	return false;
}

BatchPtr
MakeBatch(std::vector<Job> jobs)
{
	auto batch = std::make_shared<Batch>();
	for (auto &job : jobs) {
		BatchJob bj;
		bj.opts = job.Options();
		if (const std::string *data = job.Field("data")) {
			std::string reason;
			const std::string *name = job.Field("name");
			bj.msg = ParseMessage(name ? *name : std::string(), *data, &reason);
			if (!bj.msg)
				bj.fail_reason = reason;
		} else {
			bj.fail_reason = "invalid message: data missing";
		}
		bj.job = std::move(job);
		batch->jobs.push_back(std::move(bj));
	}
	return batch;
}

size_t
MarkInserted(Batch &batch, const std::vector<InboxMessage> &inserted)
{
	std::multiset<std::string> fresh;
	for (const auto &m : inserted)
		fresh.insert(m.id);
	size_t dups = 0;
	for (auto &bj : batch.jobs) {
		if (!bj.ToInbox())
			continue;
		auto it = fresh.find(bj.msg->id);
		bj.inserted = it != fresh.end();
		if (bj.inserted)
			fresh.erase(it);
		else
			dups++;
	}
	return dups;
}

} // namespace chat_outboxd
