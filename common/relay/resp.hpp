// common/relay/resp.hpp - build Redis requests in RESP, the wire format.
//
// The relay hands the finished bytes to hiredis (redisAppendFormattedCommand), so a whole batch
// is one contiguous write and one round trip.
#pragma once

#include <string>
#include <string_view>

namespace chat_outbox {

// RespCommand appends one command (an array of bulk strings) to *out. Begin() declares the
// argument count; every Arg() then appends one argument.
class RespCommand {
  public:
	RespCommand(std::string *out, size_t argc);
	RespCommand &Arg(std::string_view a);
	RespCommand &Arg(long long v);

  private:
	std::string *out_;
};

} // namespace chat_outbox
