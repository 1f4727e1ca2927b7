// tests/harness/batch_add_lua.mjs - the relay's batch-add script as the relay builds it, read from
// its sources without a build: the shared prelude (common/bullmq/lua/prelude.lua) then the script
// (common/relay/lua/batch_add.lua). Older revisions, which a benchmark may compare against, kept both
// as raw strings in C++ sources (common/relay/bullmq_batch_add.cpp, common/bullmq/lua_prelude.hpp).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BATCH_ADD_LUA = fileURLToPath(new URL('../../common/relay/lua/batch_add.lua', import.meta.url));
export const PRELUDE_LUA = fileURLToPath(new URL('../../common/bullmq/lua/prelude.lua', import.meta.url));

const isCpp = (src) => src.includes('R"LUA(');
// luaOf: the Lua of a file's text, the first raw string of a C++ source, else the text itself
const luaOf = (src) => (isCpp(src) ? src.match(/R"LUA\(([\s\S]*?)\)LUA"/)[1] : src);
// a script starts with the prelude, except in C++ sources older than the prelude (no kLuaPrelude)
const usesPrelude = (src) => !isCpp(src) || src.includes('kLuaPrelude');

// batchAddLua returns the script from the texts of the two files, at any revision
export function batchAddLua(src, preludeSrc) {
	return (usesPrelude(src) ? luaOf(preludeSrc) : '') + luaOf(src);
}

// readBatchAddLua reads the two files (by default the working tree's)
export function readBatchAddLua(scriptFile = BATCH_ADD_LUA, preludeFile = PRELUDE_LUA) {
	const src = readFileSync(scriptFile, 'utf8');
	return batchAddLua(src, usesPrelude(src) ? readFileSync(preludeFile, 'utf8') : '');
}
