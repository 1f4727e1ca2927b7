#!/usr/bin/env bash
# repo.lua: every Lua script of the repository (the .lua files git knows or would add: those the builds
# embed with scripts/embed_lua.py) compiles, each file by itself, so a syntax error is reported with the file
# and line it is in rather than at the first call of the assembled script. The compiler is Redis's own
# (SCRIPT LOAD on a Redis of this test's), the Lua the scripts run in; a script's globals (the
# prelude's locals, KEYS) are only looked up when it runs. And no C++ file holds Lua of its own: `git grep -l
# redis.call` over *.cpp and *.hpp prints nothing (the scripts are .lua files the builds embed). About a second.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init repo-lua
cd "$H_ROOT"
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard -- '*.lua')
[ "${#scripts[@]}" -gt 0 ] || fail "git ls-files lists no .lua file: not a checkout?"
if hits=$(git grep -l redis.call -- '*.cpp' '*.hpp'); then
	fail "Lua in C++ (a script belongs in a .lua file the build embeds; or reword a comment the pattern matches):"$'\n'"$hits"
fi
harness_redis_start
for f in "${scripts[@]}"; do
	reply=$(rcli -x SCRIPT LOAD <"$f" 2>&1)
	[[ $reply =~ ^[0-9a-f]{40}$ ]] || fail "$f does not compile: $reply"
done
echo "ok   ${#scripts[@]} Lua scripts compile"
