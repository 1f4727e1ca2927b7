// daemon/src/gateway/engineio/core/recovery.cpp - see recovery.hpp.
#include "gateway/engineio/core/recovery.hpp"

#include "gateway/client/core/message_json.hpp"

namespace chat_outboxd::sio {

namespace {

// A pid we hand out is "<random>.<seq>"; its seq is what a client without an offset resumes from.
bool
SeqFromPid(const std::string &pid, int64_t *seq)
{
	size_t dot = pid.rfind('.');
	if (dot == std::string::npos)
		return false;
	return JsonInteger(pid.substr(dot + 1), seq);
}

bool
UsablePid(const nlohmann::json &v)
{
	if (!v.is_string())
		return false;
	const std::string &s = v.get_ref<const std::string &>();
	return !s.empty() && s.size() <= 64 &&
	       s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == std::string::npos;
}

} // namespace

Resume
ReadResume(const nlohmann::json &auth)
{
	Resume r;
	if (!auth.is_object())
		return r;
	auto pid_it = auth.find("pid");
	if (pid_it != auth.end() && UsablePid(*pid_it))
		r.pid = pid_it->get<std::string>();
	auto offset = auth.find("offset");
	auto since = auth.find("since");
	int64_t v = 0;
	if (offset != auth.end() && JsonInteger(*offset, &v) && v >= 0)
		r.after = v;
	else if (since != auth.end() && JsonInteger(*since, &v) && v >= 0)
		r.after = v;
	else if (!r.pid.empty() && SeqFromPid(r.pid, &v) && v >= 0)
		r.after = v;
	return r;
}

std::string
MakePid(const std::string &random, int64_t high_seq)
{
	return random + "." + std::to_string(high_seq >= 0 ? high_seq : 0);
}

} // namespace chat_outboxd::sio
