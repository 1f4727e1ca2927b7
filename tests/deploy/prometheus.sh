#!/usr/bin/env bash
# tests/deploy/prometheus.sh - deploy.prometheus: a real Prometheus (Debian's binary, its own config in
# this test's folder, scrape and evaluation every second) with deploy/prometheus/chat-outbox.rules.yml
# scrapes two chat-outboxd (workers and consumers) and a chat-outbox-relay (--metrics-listen) of a managed
# install; the consumers daemon also exports the status views (--outbox-status-url, as for the extension):
#   1. every metric name the rules and deploy/grafana/chat-outbox.json query (tests/deploy/metric_names.py)
#      is in what Prometheus scraped from them;
#   2. ChatOutboxRelayNotRunning is quiet while the relay runs, fires once the relay is SIGKILLed (its
#      target's series end at once; the daemon's copy of the status view says stopped 10 s after the
#      relay's last heartbeat), and clears once it runs again; the daemon's figures follow it.
#   3. Postgres restarted: the relay's and the daemons' postgres reconnect counters move in Prometheus.
# And a relay whose --metrics-listen is in use or not on this machine exits 2 at start, naming it.
# The one change to the rules: ChatOutboxRelayNotRunning's `for:` is 2s here instead of 1m, so the suite
# waits seconds, not minutes; every other line is the shipped file's. All waits are on states (the
# targets' health, the alert's state through /api/v1/alerts), never fixed sleeps.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
relay_managed_env deploy-prometheus
daemon_export_settings

daemon_start workers.log --service workers --queue chat-messages
WORKERS_PORT=$DAEMON_PORT
daemon_start consumers.log --service consumers --queue chat-replies --outbox-status-url "$PGURL" --outbox-status-interval 500
CONSUMERS_PORT=$DAEMON_PORT
RELAY_METRICS_PORT=$(harness_free_port)
relay_start one --metrics-listen "127.0.0.1:$RELAY_METRICS_PORT"

# the shipped rules, with the relay alert's `for:` shortened (and nothing else changed)
python3 - "$H_ROOT/deploy/prometheus/chat-outbox.rules.yml" "$H_DIR/rules.yml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
rules = [r for g in doc["groups"] for r in g["rules"] if r.get("alert") == "ChatOutboxRelayNotRunning"]
assert len(rules) == 1, "ChatOutboxRelayNotRunning not found once in the rules"
rules[0]["for"] = "2s"
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
PY
PROM_PORT=$(harness_free_port)
PROM=http://127.0.0.1:$PROM_PORT
cat >"$H_DIR/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $H_DIR/rules.yml
scrape_configs:
  - job_name: chat-outboxd
    static_configs:
      - targets: ['127.0.0.1:$WORKERS_PORT', '127.0.0.1:$CONSUMERS_PORT']
  - job_name: chat-outbox-relay
    static_configs:
      - targets: ['127.0.0.1:$RELAY_METRICS_PORT']
YML
prometheus --config.file="$H_DIR/prometheus.yml" --storage.tsdb.path="$H_DIR/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$H_DIR/prometheus.log" 2>&1 &
harness_track $!

api() { curl -sf "$PROM/api/v1/$1"; }
# targets_up: how many of the three targets Prometheus last scraped successfully
targets_up() {
	api targets | python3 -c 'import json, sys; print(sum(t["health"] == "up" for t in json.load(sys.stdin)["data"]["activeTargets"]))'
}
# alert_state <name>: firing, pending or inactive
alert_state() {
	api alerts | python3 -c 'import json, sys
states = [a["state"] for a in json.load(sys.stdin)["data"]["alerts"] if a["labels"]["alertname"] == sys.argv[1]]
print(states[0] if states else "inactive")' "$1"
}
# prom_value <query>: the value of the query's first sample, "none" without one
prom_value() {
	curl -sfG "$PROM/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
# missing_names: the rules' and the dashboard's metric names Prometheus has not scraped
missing_names() {
	comm -23 "$H_DIR/used-names.txt" <(api label/__name__/values | python3 -c 'import json, sys; print("\n".join(sorted(json.load(sys.stdin)["data"])))')
}
no_missing_names() { [ -z "$(missing_names)" ]; }
harness_wait_for 30 api status/buildinfo
harness_wait_value 30 = 3 targets_up
echo "ok   Prometheus scrapes both daemons and the relay"

# A --metrics-listen the relay cannot listen on stops it at start, exit 2, one line naming the address and
# why: in use (the relay above holds it), and an address that is not on this machine (TEST-NET-1).
relay_metrics_refused() { # <address> <reason>
	local rc=0
	timeout 20 "$CHAT_OUTBOX_RELAY" --database-url "$PGURL" --redis-url "$REDIS_URL" --metrics-listen "$1" \
		>"$H_DIR/refused.log" 2>&1 || rc=$?
	[ "$rc" = 2 ] || fail "relay --metrics-listen $1: exit $rc, want 2: $(cat "$H_DIR/refused.log")"
	expect_eq "relay --metrics-listen $1: its output" "chat-outbox-relay: --metrics-listen: cannot listen on $1: $2" \
		"$(cat "$H_DIR/refused.log")"
}
relay_metrics_refused "127.0.0.1:$RELAY_METRICS_PORT" "Address already in use"
relay_metrics_refused "192.0.2.1:$RELAY_METRICS_PORT" "Cannot assign requested address"
echo "ok   relay --metrics-listen in use or not an address of this machine: exit 2 at start, the address named"

# 1. every name the rules and the dashboard use is in a real scrape
python3 "$H_ROOT/tests/deploy/metric_names.py" "$H_ROOT/deploy/prometheus/chat-outbox.rules.yml" \
	"$H_ROOT/deploy/grafana/chat-outbox.json" | sort >"$H_DIR/used-names.txt"
[ "$(wc -l <"$H_DIR/used-names.txt")" -ge 20 ] || fail "metric_names.py found only $(wc -l <"$H_DIR/used-names.txt") names"
# series a daemon prints once it holds its partition's lease come a lease tick after the start
harness_wait_for 30 no_missing_names ||
	fail "metric names used by the rules or the dashboard but in no scrape: $(missing_names | paste -sd' ')"
echo "ok   all $(wc -l <"$H_DIR/used-names.txt") metric names of the rules and the dashboard are in the scrapes"

# 2. the relay alert: quiet while it runs, firing once it is killed, cleared once it is back
harness_wait_value 30 = inactive alert_state ChatOutboxRelayNotRunning
echo "ok   ChatOutboxRelayNotRunning inactive while the relay runs"
kill -9 "$RELAY_PID"
harness_wait_value 30 = firing alert_state ChatOutboxRelayNotRunning
echo "ok   ChatOutboxRelayNotRunning firing once the relay was SIGKILLed"
harness_wait_value 30 = 1 prom_value 'chat_outbox_relay_state{job="chat-outboxd",state="stopped"}'
echo "ok   the daemon's copy of the status view says stopped"
relay_start again --metrics-listen "127.0.0.1:$RELAY_METRICS_PORT"
harness_wait_value 30 = inactive alert_state ChatOutboxRelayNotRunning
echo "ok   ChatOutboxRelayNotRunning cleared once the relay runs again"
harness_wait_value 30 = 1 prom_value 'chat_outbox_relay_state{job="chat-outboxd",state="running"}'
[ "$(prom_value 'count(chat_outbox_unsent{job="chat-outboxd"})')" = 2 ] ||
	fail "the daemon's backlog series: $(prom_value 'count(chat_outbox_unsent{job="chat-outboxd"})') partitions, want 2"
echo "ok   the daemon's copy says running again, with both services' partitions"

# 3. Postgres restarted under the relay and the daemons: the reconnect counters the dashboard's failover panel
# reads move, as Prometheus scrapes them
harness_pg_ctl -m fast -w restart >/dev/null
harness_wait_value 30 -ge 1 prom_value 'max(chat_outbox_relay_postgres_reconnects_total)'
harness_wait_value 30 -ge 2 prom_value 'count(chat_outboxd_postgres_reconnects_total >= 1)'
echo "ok   Postgres restarted: the relay's and both daemons' postgres reconnect counters moved"
