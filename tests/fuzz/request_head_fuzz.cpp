// tests/fuzz/request_head_fuzz.cpp - the request head scan on arbitrary bytes: no crash, and its one
// promise to the head reader, which calls it again on every new byte: a verdict other than Incomplete
// is final (any longer input that starts with these bytes gets the same), and Incomplete only while
// the bytes are fewer than the head bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gateway/http/core/http_request.hpp"

using chat_outboxd::http::HeadScan;
using chat_outboxd::http::kMaxHeadBytes;
using chat_outboxd::http::ScanHead;

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::string_view in(reinterpret_cast<const char *>(data), size);
	HeadScan whole = ScanHead(in);
	if (whole == HeadScan::Incomplete && size >= kMaxHeadBytes)
		__builtin_trap();
	// every prefix, as the head reader sees the bytes arrive
	for (size_t n = 0; n < size; n++) {
		HeadScan part = ScanHead(in.substr(0, n));
		if (part != HeadScan::Incomplete && part != whole)
			__builtin_trap();
	}
	return 0;
}
