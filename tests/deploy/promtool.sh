#!/usr/bin/env bash
# tests/deploy/promtool.sh - deploy.promtool: the alerting rules load (promtool check rules) and each alert
# fires and stays quiet as deploy/prometheus/chat-outbox.rules.test.yml says (promtool test rules).
# Debian's promtool (package prometheus, scripts/setup.sh). No servers.
set -euo pipefail
. "$(dirname "$0")/../harness/lib.sh"
harness_init deploy-promtool
RULES=$H_ROOT/deploy/prometheus

promtool check rules "$RULES/chat-outbox.rules.yml" >"$H_DIR/check.log" 2>&1 || { cat "$H_DIR/check.log" >&2; fail "promtool check rules"; }
grep -q "SUCCESS" "$H_DIR/check.log" || fail "promtool check rules: $(cat "$H_DIR/check.log")"
echo "ok   promtool check rules: $(grep -o '[0-9]* rules found' "$H_DIR/check.log")"
# the tests name the rule file relative to their own folder
(cd "$RULES" && promtool test rules chat-outbox.rules.test.yml) >"$H_DIR/test.log" 2>&1 ||
	{ cat "$H_DIR/test.log" >&2; fail "promtool test rules"; }
echo "ok   promtool test rules: every alert fires and stays quiet as its tests say"
