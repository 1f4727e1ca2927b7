// tests/harness/batch_add_lua.mjs - the relay's batch-add script as the relay builds it, read from
// the C++ sources without a build: the shared prelude's Lua (common/bullmq/lua_prelude.hpp), when the
// script's source starts with it, then the script's own (common/relay/bullmq_batch_add.cpp).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BATCH_ADD_CPP = fileURLToPath(new URL('../../common/relay/bullmq_batch_add.cpp', import.meta.url));
export const LUA_PRELUDE_HPP = fileURLToPath(new URL('../../common/bullmq/lua_prelude.hpp', import.meta.url));

const luaBlock = (src) => src.match(/R"LUA\(([\s\S]*?)\)LUA"/)[1];

// batchAddLua returns the script from the texts of the two files, at any revision: a source that
// does not use kLuaPrelude (older revisions) is the whole script by itself
export function batchAddLua(src, preludeSrc) {
	return (src.includes('kLuaPrelude') ? luaBlock(preludeSrc) : '') + luaBlock(src);
}

// readBatchAddLua reads the two files (by default the working tree's)
export function readBatchAddLua(cppFile = BATCH_ADD_CPP, preludeFile = LUA_PRELUDE_HPP) {
	const src = readFileSync(cppFile, 'utf8');
	return batchAddLua(src, src.includes('kLuaPrelude') ? readFileSync(preludeFile, 'utf8') : '');
}
