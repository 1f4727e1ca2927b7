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
