# tests/harness/moves.sh - what the two suites that move a database share (tests/extension/moves.sh,
# tests/managed/moves.sh; sourced after tests/harness/lib.sh): the sends, with each message's id
# recorded in send order; the checks of a moved outbox before its relay passes; the queue's record of
# every job the relays sent; the verdict. Service consumers, queue chat-messages; one Redis, each
# move's relay under its own BullMQ prefix (a restored backlog is the same job ids wherever it goes).
#   moves_send <url> <phase> <count> <chats> <file>
#                                   <count> send_message, one transaction each, message n to chat
#                                   n mod <chats> + 1; appends "id chat_id phase" per message to <file>;
#                                   phase: old (relayed before the move), backlog or new (sent after it)
#   moves_sender_start <url> <phase> <count> <chats> <file>
#                                   the same in the background (moves_sender.mjs, one connection),
#                                   each send tried again while it is refused with 55000 (the outbox
#                                   not rebased yet; any other error ends it, failed; so does a refusal
#                                   60 s long); its refusals are counted in <file>.refused. Returns
#                                   once it was refused (the relay is enabled after that)
#   moves_sender_go <url> <phase> <count> <chats> <file>
#                                   the same, returning at once: for a relay that runs already, which
#                                   may rebase before the first send (refused or not)
#   moves_sender_wait               waits for it; fails unless it sent everything
#   moves_moved <url>               how many of the services' outboxes came from another database
#   moves_refused <url> <what>      send_message must fail with SQLSTATE 55000 and write nothing
#   moves_rotation_waits <url> <what>  a rotation step (chat_outbox.outbox_rotate, as the relay runs it)
#                                   before the rebase waits for it, and the status says so
#   moves_rebased <log>             "rows" of the last "rebased the outbox of service consumers" line of
#                                   a server log ("none" without one); moves_rebase_lines <log>: how many
#   moves_settled <url>             every outbox of the database rebased and nothing unsent (status)
#   moves_sync_sequences <from url> <to url>  each sequence of <to> set to <from>'s value (a cutover step)
#   moves_verify <what> <prefix> <never> <expected...>
#                                   the verdict, from the queue under <prefix> (below); fails unless
#                                   every count is 0. MOVES_MAY_SEND_AGAIN=1 moves_verify ...: the
#                                   messages of <never> may go again (counted, and printed, as again),
#                                   each at most once and in its chat's order; every other count must be 0
# What proves "once" and "never again": no Worker takes the jobs, so every job the relays created stays
# in the queue's wait list, and every job a relay sends leaves one event in the queue's events stream:
# `added` when it created the job, `duplicated` when the job was there already (the batch-add script,
# common/relay/lua/batch_add.lua). The stream (not trimmed below BullMQ's 10,000 events) is thus the
# record of every send: a message is sent once when it has exactly one of the two, and a message
# relayed before the move that has a second (or, under another prefix, any) was sent again. The order
# is the order of the adds, and must be what bullmq's own Queue lists in wait, oldest first: the order
# a Worker takes them. Counted (moves_verify): lost (expected, never sent), twice (sent more than once;
# a message of <never> sent more than once under the prefix, too), again (relayed before the move, sent
# again), out of order (a chat's message added after a later one of the same chat, in send order: the
# messages of <never> first, then <expected...>), new before backlog (a message sent after the move
# added before the last of the backlog), unexpected (sent, but not a message of this move).

moves_send() {
	local url=$1 phase=$2 count=$3 chats=$4 file=$5 n before
	touch "$file"
	before=$(wc -l <"$file")
	for ((n = 0; n < count; n++)); do
		echo "SELECT id, chat_id FROM consumers.send_message($((n % chats + 1)), '$phase $n');"
	done >"$file.sql"
	psql -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -F ' ' "$url" -f "$file.sql" >"$file.out" 2>"$file.err" ||
		fail "moves_send $phase: $(cat "$file.err")"
	awk -v p="$phase" '{ print $1, $2, p }' "$file.out" >>"$file"
	[ "$(($(wc -l <"$file") - before))" = "$count" ] || fail "moves_send $phase: $(($(wc -l <"$file") - before)) of $count sent"
}

moves_sender_go() {
	MOVES_SENDER_LOG=$H_DIR/sender-$(basename "$5" .txt).log
	MOVES_SENDER_PHASE=$2
	MOVES_SENDER_REFUSED=$5.refused
	rm -f "$MOVES_SENDER_REFUSED"
	node "$H_ROOT/tests/harness/moves_sender.mjs" "$@" >"$MOVES_SENDER_LOG" 2>&1 &
	MOVES_SENDER_PID=$!
	harness_track "$MOVES_SENDER_PID"
}

moves_sender_start() {
	moves_sender_go "$@"
	# the relay is enabled only after this: the sender retries on one connection while the rebase runs
	harness_wait_for 30 test -s "$MOVES_SENDER_REFUSED" || fail "sender $2: never refused ($(cat "$MOVES_SENDER_LOG"))"
}

moves_sender_wait() {
	wait "$MOVES_SENDER_PID" || fail "sender $MOVES_SENDER_PHASE: $(cat "$MOVES_SENDER_LOG")"
}

moves_moved() {
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "SELECT count(*) FILTER (WHERE chat_outbox.outbox_moved(name)) FROM chat_outbox.services"
}

moves_refused() {
	local url=$1 what=$2 before out
	before=$(psql -XAtq -v ON_ERROR_STOP=1 "$url" -c "SELECT count(*) FROM consumers.messages")
	if out=$(psql -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$url" -c "SELECT consumers.send_message(1, 'refused')" 2>&1); then
		fail "$what: send_message went through before the rebase"
	fi
	echo "$out" | grep '^ERROR:  55000: the outbox of service "consumers" came from another database and is not rebased yet' >/dev/null ||
		fail "$what: send_message failed otherwise: $out"
	expect_eq "$what: messages written by the refused send" "$before" \
		"$(psql -XAtq -v ON_ERROR_STOP=1 "$url" -c "SELECT count(*) FROM consumers.messages")"
	echo "ok   $what: send_message refused with 55000 before the rebase"
}

moves_rotation_waits() {
	local url=$1 what=$2 want="the rebase of an outbox from another database (the relay's next pass)" out
	out=$(psql -XAtq -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$url" -c "SELECT chat_outbox.outbox_rotate('consumers', 0)" 2>&1) ||
		fail "$what: a rotation step before the rebase failed: $out"
	expect_eq "$what: a rotation step before the rebase" "$want" "$out"
	expect_eq "$what: status rotation_wait" "$want" "$(relay_status rotation_wait "$url")"
}

moves_rebase_lines() { grep -c 'rebased the outbox of service "consumers" from another database' "$1" || true; }
moves_rebased() {
	local line
	line=$(grep 'rebased the outbox of service "consumers" from another database' "$1" | tail -n 1)
	[ -n "$line" ] || { echo none; return; }
	echo "$line" | sed -n 's/.*from another database: \([0-9]*\) rows to send again.*/\1/p'
}

moves_settled() {
	[ "$(moves_moved "$1")" = 0 ] &&
		[ "$(psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "SELECT count(*) FROM chat_outbox.status WHERE unsent IS DISTINCT FROM 0")" = 0 ]
}

moves_sync_sequences() {
	psql -XAtq -v ON_ERROR_STOP=1 "$1" -c "SELECT format('SELECT pg_catalog.setval(%L, %s, true);', format('%I.%I', schemaname, sequencename), last_value)
		FROM pg_sequences WHERE last_value IS NOT NULL" | psql -XAtq -v ON_ERROR_STOP=1 "$2" -f - >/dev/null
}

# moves_adds <prefix>: "<event> <jobId>" for each added and duplicated event of the queue, in stream order
moves_adds() {
	rcli xrange "$1:chat-messages:events" - + | awk '$0 == "event" { getline e; next } $0 == "jobId" { getline j; if (e == "added" || e == "duplicated") print e, j }'
}

# moves_waiting <prefix>: the job ids bullmq's Queue lists in wait, oldest first
moves_waiting() {
	(cd "$H_ROOT/tests/harness" && node --input-type=module -e "
const { Queue } = await import('bullmq');
const u = new URL(process.env.REDIS_URL);
const q = new Queue('chat-messages', { connection: { host: u.hostname, port: +u.port }, prefix: '$1' });
for (const j of await q.getJobs(['wait'], 0, -1, true)) console.log(j.id);
await q.close();")
}

moves_verify() {
	local what=$1 prefix=$2 never=${3:-/dev/null} tag counts events
	shift 3
	tag=$H_DIR/verify-$prefix
	cat "$@" >"$tag.expected"
	moves_adds "$prefix" >"$tag.adds"
	events=$(rcli xlen "$prefix:chat-messages:events")
	[ "$events" -lt 9000 ] || fail "$what: $events events under $prefix, BullMQ trims the stream: the sends cannot be counted"
	moves_waiting "$prefix" >"$tag.waiting"
	awk '$1 == "added" && !seen[$2]++ { print $2 }' "$tag.adds" >"$tag.added"
	diff -q "$tag.added" "$tag.waiting" >/dev/null ||
		fail "$what: bullmq's wait list under $prefix is not the adds, in their order: $(diff "$tag.added" "$tag.waiting" | head -5)"
	counts=$(awk -v expected="$tag.expected" -v never="$never" -v adds="$tag.adds" 'BEGIN {
		while ((getline line < never) > 0) { split(line, f, " "); no[f[1]] = 1; r++; rank_no[f[1]] = r; chat[f[1]] = f[2] }
		while ((getline line < expected) > 0) { split(line, f, " "); n++; rank[f[1]] = r + n; chat[f[1]] = f[2]; phase[f[1]] = f[3] }
		while ((getline line < adds) > 0) {
			split(line, f, " ")
			sends[f[2]]++
			if (f[1] == "duplicated") dup++
			if (f[1] == "added" && !(f[2] in pos)) { p++; pos[f[2]] = p; at[p] = f[2] }
		}
		for (id in rank) {
			if (!(id in sends)) lost++
			else if (sends[id] > 1) { if (phase[id] == "old") again++; else twice++ }
		}
		for (id in sends) if (id in no) { again++; if (sends[id] > 1) twice++ } else if (!(id in rank)) unexpected++
		for (k = 1; k <= p; k++) {
			id = at[k]
			if (id in no) rk = rank_no[id]; else if (id in rank) rk = rank[id]; else continue
			if (rk < top[chat[id]]) ooo++; else top[chat[id]] = rk
			if (phase[id] == "backlog") last_backlog = k
		}
		for (k = 1; k <= p; k++) if ((at[k] in phase) && phase[at[k]] == "new" && k < last_backlog) early++
		printf "lost %d, twice %d, again %d, out of order %d, new before backlog %d, unexpected %d", lost, twice, again, ooo, early, unexpected
		printf " (%d messages expected, %d jobs added, %d duplicated events)\n", n, p, dup
	}')
	echo "$what: $counts"
	case $counts in
	"lost 0, twice 0, again 0, out of order 0, new before backlog 0, unexpected 0 "*) echo "ok   $what: the backlog once, in order, before the new messages; nothing relayed before the move sent again" ;;
	"lost 0, twice 0, again "*", out of order 0, new before backlog 0, unexpected 0 "*)
		[ "${MOVES_MAY_SEND_AGAIN:-0}" = 1 ] || fail "$what: $counts"
		echo "ok   $what: the backlog once, in order, before the new messages; $(echo "$counts" | sed 's/.*again \([0-9]*\),.*/\1/') relayed before the move sent again (allowed here), each once, in order"
		;;
	*) fail "$what: $counts" ;;
	esac
}
