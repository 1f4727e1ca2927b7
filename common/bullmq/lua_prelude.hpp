// common/bullmq/lua_prelude.hpp - the Lua every chat_outbox BullMQ script starts with: the rules the
// relay's batch add (common/relay/bullmq_batch_add.cpp) and the consumer's scripts
// (daemon/src/consumer/core/bullmq_scripts.cpp) share about a queue's keys and its meta hash.
//
// Each script is kLuaPrelude followed by its own text, so both read a queue the same way. The Lua is
// common/bullmq/lua/prelude.lua (the locals it defines and the rules of its checks are in its head),
// embedded at build time by scripts/embed_lua.py; this header is its one way in.
#pragma once

#include "common/bullmq/lua/scripts.hpp" // built from common/bullmq/lua/*.lua

namespace chat_outbox::bullmq {

inline constexpr const auto &kLuaPrelude = lua::kPrelude;

} // namespace chat_outbox::bullmq
