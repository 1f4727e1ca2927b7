# tests/extension/delivery.sh - what arrived, compared with what Postgres stored (sourced by suites).
# Needs $PROCESSED: the job ids a bullmq Worker processed (consume.mjs), one a line.

stored() { harness_psql "SELECT count(*) FROM consumers.messages"; }
stored_at_least() { [ "$(stored)" -ge "$1" ]; }
distinct_processed() { sort -u "$PROCESSED" | wc -l; }
relayed_up_to() { [ "$(harness_psql "SELECT count(*) FROM consumers.outbox WHERE id <= $1 AND sent_at IS NULL")" -eq 0 ]; }
all_delivered() { [ "$(distinct_processed)" -eq "$(stored)" ]; }

verify_delivered() { # verify_delivered <phase>: every stored message processed exactly once, nothing else processed
	harness_wait_for 60 all_delivered || fail "$1: stored $(stored), processed $(distinct_processed)"
	harness_psql "SELECT id FROM consumers.messages" | sort >"$H_DIR/stored.txt"
	sort -u "$PROCESSED" >"$H_DIR/processed-distinct.txt"
	if ! diff -q "$H_DIR/stored.txt" "$H_DIR/processed-distinct.txt" >/dev/null; then
		echo "FAIL $1: processed ids differ from stored ids"; diff "$H_DIR/stored.txt" "$H_DIR/processed-distinct.txt" | head; exit 1
	fi
	local dups; dups=$(sort "$PROCESSED" | uniq -d | wc -l)
	[ "$dups" -eq 0 ] || fail "$1: $dups jobs processed twice"
	[ "$(harness_psql "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")" -eq 0 ] || fail "$1: unsent rows left"
	echo "ok   $1: $(stored) stored, $(distinct_processed) processed exactly once"
}

# processed job ids in the order the Worker took them (first time each) must be the outbox order.
# Jobs the Worker lost with its connection and took again after the stalled check (consume.mjs lists
# them in $PROCESSED.retaken) come late from any bullmq Worker: left out here, verify_delivered still
# counts them.
verify_order() { # verify_order <phase>
	touch "$PROCESSED.retaken"
	harness_psql "SELECT payload ->> 'id' FROM consumers.outbox ORDER BY id" | grep -vxFf "$PROCESSED.retaken" >"$H_DIR/outbox-order.txt" || true
	awk '!seen[$0]++' "$PROCESSED" | grep -vxFf "$PROCESSED.retaken" >"$H_DIR/processed-order.txt" || true
	diff -q "$H_DIR/outbox-order.txt" "$H_DIR/processed-order.txt" >/dev/null ||
		fail "$1: processed out of outbox order: $(diff "$H_DIR/outbox-order.txt" "$H_DIR/processed-order.txt" | head -5)"
	echo "ok   $1: processed in outbox order"
}

# A sender that sends until told to stop (send.mjs until:FILE), for phases that wait for sends after
# an event the test caused: a fixed count may all be sent before that event on a slower machine.
#   sender_start <tag> <interval_ms>   sets SENDER_PID; sends are counted in $H_DIR/<tag>.acked
#   sender_acked_at_least <n>          at least n sends of the current sender acknowledged
#   sender_stop                        stop it, wait for it
sender_start() {
	SENDER_TAG=$1
	: >"$H_DIR/$1.acked"
	node "$H_ROOT/tests/extension/send.mjs" "until:$H_DIR/$1.stop" "$1" "$2" "$H_DIR/$1.acked" >"$H_DIR/sender-$1.log" 2>&1 &
	SENDER_PID=$!
	harness_track $SENDER_PID
}
sender_acked() { wc -l <"$H_DIR/$SENDER_TAG.acked"; }
sender_acked_at_least() { [ "$(sender_acked)" -ge "$1" ]; }
sender_stop() {
	touch "$H_DIR/$SENDER_TAG.stop"
	wait "$SENDER_PID" || fail "sender $SENDER_TAG exited $?"
}

# Lost / twice / out of order, counted, for suites with one sender sending one message at a time
# (send.mjs): each send's transaction starts after the previous one committed, so a chat's messages
# must arrive in the order of their created_at (the late-commit guarantee), whatever the partitions.
#   delivery_counts <stored> <processed> [<retaken>]
#     <stored>: "id chat_id" lines, each chat's in the order its messages must arrive; <processed>:
#     job ids in the order they were processed (or wait in their queue); <retaken>: ids left out of
#     the order count (see verify_order). Prints "lost L, twice T, out of order O, not stored N":
#     stored and never processed; processed more than once; processed after a later message of its
#     chat; processed but never stored. Reads files only.
#   verify_counted <phase>   the counts of this test's messages and $PROCESSED; fails unless all are 0
delivery_counts() {
	awk -v stored="$1" -v processed="$2" -v retaken="${3:-/dev/null}" 'BEGIN {
		while ((getline line < retaken) > 0) late[line] = 1
		while ((getline line < stored) > 0) { split(line, f, " "); n++; rank[f[1]] = n; chat[f[1]] = f[2] }
		while ((getline id < processed) > 0) {
			if (id == "") continue
			if (!(id in rank)) { unstored++; continue }
			if (seen[id]++) { if (seen[id] == 2) twice++; continue }
			if (id in late) continue
			if (rank[id] < top[chat[id]]) ooo++; else top[chat[id]] = rank[id]
		}
		for (id in rank) if (!(id in seen)) lost++
		printf "lost %d, twice %d, out of order %d, not stored %d\n", lost, twice, ooo, unstored
	}'
}

verify_counted() {
	harness_wait_for 60 all_delivered || true # a lost message: the counts below say which way
	harness_psql "SELECT id, chat_id FROM consumers.messages ORDER BY chat_id, created_at, id" | tr '|' ' ' >"$H_DIR/stored-order.txt"
	local counts
	counts=$(delivery_counts "$H_DIR/stored-order.txt" "$PROCESSED" "$PROCESSED.retaken")
	[ "$counts" = "lost 0, twice 0, out of order 0, not stored 0" ] || fail "$1: $(stored) stored: $counts"
	echo "ok   $1: $(stored) stored: $counts"
}
