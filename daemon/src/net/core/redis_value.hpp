// daemon/src/net/core/redis_value.hpp - a Redis reply as plain data.
//
// The I/O layer copies each hiredis reply into this type, so the BullMQ reply decoders in core/
// are unit-tested with hand-built replies and never see hiredis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chat_outboxd {

struct RedisValue {
	enum class Type { Nil,
		              Integer,
		              String,
		              Status,
		              Error,
		              Array };
	Type type = Type::Nil;
	int64_t integer = 0;
	std::string str; // String, Status and Error
	std::vector<RedisValue> elements;

	bool IsNil() const { return type == Type::Nil; }
	bool IsError() const { return type == Type::Error; }
	bool IsArray() const { return type == Type::Array; }

	static RedisValue Int(int64_t v)
	{
		RedisValue r;
		r.type = Type::Integer;
		r.integer = v;
		return r;
	}
	static RedisValue Str(std::string s)
	{
		RedisValue r;
		r.type = Type::String;
		r.str = std::move(s);
		return r;
	}
	static RedisValue Err(std::string s)
	{
		RedisValue r;
		r.type = Type::Error;
		r.str = std::move(s);
		return r;
	}
	static RedisValue Arr(std::vector<RedisValue> items)
	{
		RedisValue r;
		r.type = Type::Array;
		r.elements = std::move(items);
		return r;
	}
};

} // namespace chat_outboxd
