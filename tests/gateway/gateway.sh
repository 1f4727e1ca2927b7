# tests/gateway/gateway.sh - the gateway suites' daemon (source it): service workers on queue
# chat-messages, with the default heartbeats (a client busy for a moment on a loaded machine is never
# dropped for a late pong); a suite that tests heartbeats passes its own --ping-interval.
#   gateway_start <name> [flags...]   servers (daemon_env) and the daemon, waited until healthy;
#                                     flags given here win. Exports DAEMON_URL and H_DIR for the peers.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"

gateway_start() {
	daemon_env "$1"
	shift
	daemon_start daemon.log --service workers --queue chat-messages "$@"
	export DAEMON_URL H_DIR
	daemon_wait_healthy
}
