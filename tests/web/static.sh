#!/usr/bin/env bash
# tests/web/static.sh - --web-root: the web client's files by GET with their types, and nothing else:
# no path out of the root (.., encoded .., symlinks), no dot-files, no control characters (404, also
# percent-encoded; a percent-encoded NUL 400), no unknown types, no oversized file, no other method; an empty
# --web-root serves nothing.
. "$(dirname "$0")/../harness/lib.sh"
daemon_env web-static
built=${BUILD_DIR:-$H_ROOT/build}/web
[ -f "$built/socket.io.min.js" ] || fail "$built lacks the web client; build the 'web' target"

# A root holding the client plus every kind of file that must not be served.
root=$H_DIR/webroot
mkdir -p "$root/sub" "$root/dir.html"
cp "$built"/* "$root/"
echo 'LEAK-outside' >"$H_DIR/outside.txt"
ln -s "$H_DIR/outside.txt" "$root/link.txt"
ln -s "$H_DIR" "$root/up"
echo 'LEAK-hidden' >"$root/.hidden.txt"
echo 'LEAK-key' >"$root/server.pem"
echo 'LEAK-make' >"$root/Makefile"
echo '<p>sub</p>' >"$root/sub/index.html"
head -c $((1024 * 1024 + 1)) /dev/zero >"$root/big.js"
daemon_start daemon.log --service workers --queue chat-messages --web-root "$root"
daemon_wait_healthy
url=$DAEMON_URL

expect() { # expect <status> <content-type or -> <path> [curl args...]: prints the body's file
	local want=$1 type=$2 path=$3
	shift 3
	local got
	got=$(curl -s --path-as-is -o "$H_DIR/body" -w '%{http_code} %{content_type}' "$@" "$url$path" || true)
	[ "${got%% *}" = "$want" ] || fail "$path: status ${got%% *}, want $want"
	[ "$type" = - ] || [ "${got#* }" = "$type" ] || fail "$path: type '${got#* }', want '$type'"
	if grep -q LEAK- "$H_DIR/body"; then fail "$path leaked a file outside what may be served"; fi
	echo "ok   $* $path -> $got"
}

grep -q "web client: serving $root at /" "$H_DIR/daemon.log" || fail "no start line naming the web root"
expect 200 'text/html; charset=UTF-8' /
cmp -s "$H_DIR/body" "$root/index.html" || fail "/ is not index.html"
expect 200 'text/javascript; charset=UTF-8' /socket.io.min.js
cmp -s "$H_DIR/body" "$root/socket.io.min.js" || fail "socket.io.min.js differs"
expect 200 'text/javascript; charset=UTF-8' '/app.js?v=1'
expect 200 'text/css; charset=UTF-8' /style.css
expect 200 'text/html; charset=UTF-8' /sub/
cache=$(curl -s -o /dev/null -D - "$url/app.js" | tr -d '\r' | grep -i '^cache-control:')
[ "$cache" = 'cache-control: no-store' ] || fail "cache header: '$cache'"
echo "ok   served files are not cached (a new build is seen on reload)"

for p in /../outside.txt /%2e%2e/outside.txt /..%2foutside.txt /sub/../../outside.txt /link.txt /up/outside.txt \
	/.hidden.txt /server.pem /nope.js /Makefile /dir.html /sub '/server.pem%00.js' //etc/passwd; do
	code=$(curl -s --path-as-is -o "$H_DIR/body" -w '%{http_code}' "$url$p" || true)
	case $code in 400 | 403 | 404) ;; *) fail "$p: status $code" ;; esac
	if grep -q LEAK- "$H_DIR/body"; then fail "$p leaked a file"; fi
	echo "ok   $p -> $code"
done
# A percent-encoded control character in the path is 404, never the file the path would name
# without it (docs/web-client.md, "Serving")...
for p in /%0a /%0d /%0d%0a /%01 /%1f /%7f /index.html%0a /index.html%0d /sub/%0a /app.js%09 '/%0a?v=1'; do
	expect 404 - "$p"
done
# ...and a percent-encoded NUL anywhere in the request target is 400, answered by the gateway before
# libwebsockets reads the request (which would close the connection without an answer).
for p in /%00 /sub/%00 '/%00?v=1' /%00x /sub/%00index.html /index.html%00 /index.html%00.png /a%00b \
	/sub/index.html%00 '/app.js%00?v=1' '/app.js?v=%00'; do
	expect 400 - "$p"
done
expect 500 - /big.js
grep -q 'big.js under --web-root is over 1048576 bytes' "$H_DIR/daemon.log" || fail "no warning for big.js"
expect 404 - / -X POST -d x=1
expect 200 - /healthz

daemon_stop
daemon_start daemon.log --service workers --queue chat-messages --web-root=
daemon_wait_healthy
url=$DAEMON_URL
expect 404 - /
expect 404 - /app.js
grep -q 'web client: not served (--web-root is empty)' "$H_DIR/daemon.log" || fail "no start line for an empty --web-root"
echo PASS
