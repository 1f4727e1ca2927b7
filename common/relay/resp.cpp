// common/relay/resp.cpp - RESP request encoding (see resp.hpp).
#include "common/relay/resp.hpp"

#include <cstdio>

#include "common/relay/cpp_only.hpp"

namespace chat_outbox {

RespCommand::RespCommand(std::string *out, size_t argc) : out_(out)
{
	out_->push_back('*');
	out_->append(std::to_string(argc));
	out_->append("\r\n");
}

RespCommand &
RespCommand::Arg(std::string_view a)
{
	out_->push_back('$');
	out_->append(std::to_string(a.size()));
	out_->append("\r\n");
	out_->append(a.data(), a.size());
	out_->append("\r\n");
	return *this;
}

RespCommand &
RespCommand::Arg(long long v)
{
	return Arg(std::to_string(v));
}

} // namespace chat_outbox
