// daemon/src/gateway/http/core/http_request.cpp - see http_request.hpp.
#include "gateway/http/core/http_request.hpp"

namespace chat_outboxd::http {

bool
PathIntact(std::string_view stored, size_t path_len, std::string_view next, bool has_query)
{
	size_t gap = has_query ? 2 : 1;
	if (stored.size() < path_len + gap + next.size())
		return false;
	for (size_t i = 0; i < path_len; i++) {
		auto u = static_cast<unsigned char>(stored[i]);
		if (u < 0x20 || u == 0x7f)
			return false;
	}
	return stored[path_len] == '\0' && stored.substr(path_len + gap, next.size()) == next;
}

namespace {

// The request target: what lies between the request line's first and second space (to its end without
// a second one).
std::string_view
Target(std::string_view request_line)
{
	size_t from = request_line.find(' ');
	if (from == std::string_view::npos)
		return {};
	std::string_view rest = request_line.substr(from + 1);
	return rest.substr(0, rest.find(' '));
}

// QueryArguments: how many arguments libwebsockets splits the target's query into ('&'-separated).
size_t
QueryArguments(std::string_view target)
{
	size_t q = target.find('?');
	if (q == std::string_view::npos)
		return 0;
	size_t n = 1;
	for (char ch : target.substr(q + 1))
		n += ch == '&';
	return n;
}

} // namespace

HeadScan
ScanHead(std::string_view bytes)
{
	size_t fields = 0;
	size_t line_start = 0;
	for (size_t nl = bytes.find('\n'); nl != std::string_view::npos; nl = bytes.find('\n', line_start)) {
		std::string_view line = bytes.substr(line_start, nl - line_start);
		if (!line.empty() && line.back() == '\r')
			line.remove_suffix(1);
		size_t head_end = nl + 1;
		if (head_end > kMaxHeadBytes)
			return HeadScan::TooLarge;
		if (line_start == 0) {
			std::string_view target = Target(line);
			if (target.find("%00") != std::string_view::npos)
				return HeadScan::BadTarget;
			fields = QueryArguments(target);
		} else if (line.empty()) {
			return HeadScan::Whole;
		} else {
			fields++;
		}
		if (fields > kMaxHeadFields)
			return HeadScan::TooLarge;
		line_start = head_end;
	}
	return bytes.size() >= kMaxHeadBytes ? HeadScan::TooLarge : HeadScan::Incomplete;
}

} // namespace chat_outboxd::http
