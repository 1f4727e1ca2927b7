# tests/extension/delivery.sh - what arrived, compared with what Postgres stored (sourced by suites).
# Needs $PROCESSED: the job ids a bullmq Worker processed (consume.mjs), one a line.

stored() { harness_psql "SELECT count(*) FROM consumers.messages"; }
stored_at_least() { [ "$(stored)" -ge "$1" ]; }
distinct_processed() { sort -u "$PROCESSED" | wc -l; }
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
