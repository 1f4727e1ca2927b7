// daemon/src/consumer/core/bullmq_job.cpp - see bullmq_job.hpp.
#include "consumer/core/bullmq_job.hpp"

#include <algorithm>

#include <cmath>

#include <nlohmann/json.hpp>

namespace chat_outboxd {

namespace {

using nlohmann::json;

std::optional<KeepPolicy>
KeepFromJson(const json &v)
{
	KeepPolicy k;
	if (v.is_boolean()) {
		k.count = v.get<bool>() ? 0 : -1;
		return k;
	}
	if (v.is_number_integer() || v.is_number_unsigned()) {
		k.count = std::max<int64_t>(0, v.get<int64_t>());
		return k;
	}
	if (v.is_object()) {
		auto c = v.find("count");
		if (c != v.end() && c->is_number())
			k.count = std::max<int64_t>(0, static_cast<int64_t>(c->get<double>()));
		auto a = v.find("age");
		if (a != v.end() && a->is_number())
			k.age_s = std::max<int64_t>(0, static_cast<int64_t>(a->get<double>()));
		return k;
	}
	return std::nullopt;
}

bool
ToInt(const RedisValue &v, int64_t *out)
{
	if (v.type == RedisValue::Type::Integer) {
		*out = v.integer;
		return true;
	}
	if (v.type == RedisValue::Type::Nil) {
		*out = 0;
		return true;
	}
	return false;
}

} // namespace

const std::string *
Job::Field(const std::string &name) const
{
	auto it = fields.find(name);
	return it == fields.end() ? nullptr : &it->second;
}

int64_t
Job::AttemptsMade() const
{
	const std::string *v = Field("atm");
	if (!v)
		v = Field("attemptsMade");
	return v ? std::strtoll(v->c_str(), nullptr, 10) : 0;
}

int64_t
Job::StartsLost() const
{
	const std::string *ats = Field("ats");
	int64_t started = ats ? std::strtoll(ats->c_str(), nullptr, 10) : 0;
	return std::max<int64_t>(0, started - AttemptsMade() - 1);
}

JobOptions
Job::Options() const
{
	JobOptions o;
	const std::string *text = Field("opts");
	if (!text)
		return o;
	json j = json::parse(*text, nullptr, false);
	if (!j.is_object())
		return o;
	auto it = j.find("attempts");
	if (it != j.end() && it->is_number())
		o.attempts = static_cast<int64_t>(it->get<double>());
	it = j.find("lifo");
	o.lifo = it != j.end() && it->is_boolean() && it->get<bool>();
	it = j.find("backoff");
	if (it != j.end()) {
		if (it->is_number()) {
			o.backoff.type = "fixed";
			o.backoff.delay_ms = static_cast<int64_t>(it->get<double>());
		} else if (it->is_object()) {
			auto t = it->find("type");
			auto d = it->find("delay");
			if (t != it->end() && t->is_string())
				o.backoff.type = t->get<std::string>();
			if (d != it->end() && d->is_number())
				o.backoff.delay_ms = static_cast<int64_t>(d->get<double>());
		}
	}
	it = j.find("removeOnComplete");
	if (it != j.end())
		o.remove_on_complete = KeepFromJson(*it);
	it = j.find("removeOnFail");
	if (it != j.end())
		o.remove_on_fail = KeepFromJson(*it);
	return o;
}

std::optional<KeepPolicy>
ParseKeep(const std::string &json_value)
{
	json j = json::parse(json_value, nullptr, false);
	if (j.is_discarded())
		return std::nullopt;
	return KeepFromJson(j);
}

int64_t
BackoffDelay(const Backoff &backoff, int64_t attempts_made)
{
	if (backoff.delay_ms <= 0)
		return 0;
	if (backoff.type == "exponential") {
		double d = std::pow(2.0, static_cast<double>(std::max<int64_t>(0, attempts_made - 1))) * backoff.delay_ms;
		return static_cast<int64_t>(std::min(std::round(d), 365.0 * 24 * 3600 * 1000));
	}
	if (backoff.type == "fixed")
		return backoff.delay_ms;
	return 0;
}

bool
DecodeFetchReply(const RedisValue &reply, FetchResult *out, std::string *error)
{
	*out = FetchResult();
	if (reply.IsError()) {
		*error = reply.str;
		return false;
	}
	if (!reply.IsArray() || reply.elements.size() < 2 || !ToInt(reply.elements[0], &out->next_delayed_ms) ||
	    !ToInt(reply.elements[1], &out->rate_limited_ms)) {
		*error = "fetch: malformed reply";
		return false;
	}
	if (reply.elements.size() == 2)
		return true;
	const RedisValue &names = reply.elements[2];
	bool ok = names.IsArray() && (reply.elements.size() - 3) % 3 == 0;
	for (size_t k = 0; ok && k < names.elements.size(); k++)
		ok = names.elements[k].type == RedisValue::Type::String;
	if (!ok) {
		*error = "fetch: malformed reply";
		return false;
	}
	for (size_t i = 3; i < reply.elements.size(); i += 3) {
		const RedisValue &id = reply.elements[i], &token = reply.elements[i + 1], &values = reply.elements[i + 2];
		if (id.type != RedisValue::Type::String || token.type != RedisValue::Type::String || !values.IsArray() ||
		    values.elements.size() != names.elements.size()) {
			*error = "fetch: malformed job entry";
			return false;
		}
		Job job;
		job.id = id.str;
		job.token = token.str;
		for (size_t k = 0; k < values.elements.size(); k++)
			if (values.elements[k].type == RedisValue::Type::String)
				job.fields[names.elements[k].str] = values.elements[k].str;
		out->jobs.push_back(std::move(job));
	}
	return true;
}

bool
DecodeStatuses(const RedisValue &reply, size_t expected, std::vector<int64_t> *out, std::string *error)
{
	out->clear();
	if (reply.IsError()) {
		*error = reply.str;
		return false;
	}
	if (!reply.IsArray() || reply.elements.size() != expected) {
		*error = "malformed status reply";
		return false;
	}
	for (const auto &e : reply.elements) {
		int64_t v;
		if (!ToInt(e, &v)) {
			*error = "malformed status reply";
			return false;
		}
		out->push_back(v);
	}
	return true;
}

const char *
FinishStatusText(int64_t status)
{
	switch (status) {
	case 0:
		return "ok";
	case -1:
		return "job missing";
	case -2:
		return "lock expired";
	case -3:
		return "job not active";
	case -6:
		return "lock held by another worker";
	default:
		return "unknown status";
	}
}

} // namespace chat_outboxd
