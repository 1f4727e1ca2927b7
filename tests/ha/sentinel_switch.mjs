// tests/ha/sentinel_switch.mjs - Sentinel moves the master away from a node that stays up.
//
// Real processes: a sender calling consumers.send_message, the relay in Postgres writing through
// redis-sentinel://, chat-outboxd (workers) reading through the same URL, a socket.io client
// counting what it is shown; a master, two replicas and three sentinels (sentinel_switch.sh).
//   1. messages flow; the sender keeps sending, one every 100 ms, through what follows;
//   2. `SENTINEL FAILOVER mymaster`: the sentinels promote a replica and announce it (+switch-master)
//      while the old master keeps running. Sentinel reconfigures the old node as a replica (and closes
//      its clients) only seconds later: until then it is a master of its own that nobody replicates;
//   3. the test watches the daemon's connections on the old node (CLIENT LIST, by their names) and the
//      node's ROLE: the daemon must have left it before Sentinel demoted it. It prints how long after
//      the announcement the daemon's last connection left (a figure, not asserted);
//   4. the same again from the new master (a second failover in a row).
// Fails if the daemon was still on the old node when Sentinel demoted it, or if a message was lost,
// shown twice or out of order, or an outbox row stays unsent.
import { execSync } from 'node:child_process';
import { receivingDaemon, Sender, watcher, postgres, waitUntil, sleep, env } from '../faults/procs.mjs';
import { shownOnce, finish } from './verdict.mjs';

const CHAT = 32;
const ROUNDS = 2;
const port = Number(env('DAEMON_PORT'));
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const sh = (cmd) => execSync(cmd, { encoding: 'utf8' }).trim();
const redisCli = (p, args) => sh(`redis-cli -p ${p} ${args}`);
const sentinels = env('SENTINEL_PORTS').split(' ').map(Number);
const masterPort = () => Number(redisCli(sentinels[0], 'SENTINEL get-master-addr-by-name mymaster').split('\n')[1]);
// the daemon's connections on a node: every one it names chat-outboxd:<prefix>:<queue>:<identity>[:role]
const daemonConns = (p) => redisCli(p, 'CLIENT LIST').split('\n').filter((l) => / name=chat-outboxd:\S*:workers-test/.test(l)).length;
const role = (p) => redisCli(p, 'ROLE').split('\n')[0];

const saved = new Map(); // n -> id
const byId = new Map();
const daemon = receivingDaemon({ service: 'workers', queue: 'chat-messages', port });
await daemon.start();
const client = watcher({ port, chats: [CHAT], name: 'switch-client' });
await waitUntil('the client to connect', () => client.socket.connected, 10000);
const sender = new Sender({
	service: 'consumers', chat: CHAT,
	onSaved: (n, id) => { saved.set(n, id); byId.set(id, n); },
});
await sender.start();
let next = 1;
let sending = true;
const sendLoop = (async () => {
	while (sending) {
		await sender.send(next++);
		await sleep(100);
	}
})();
const shownUpTo = (n) => [...saved.entries()].filter(([k]) => k <= n).every(([, id]) => client.seen.some((m) => m.id === id));

const failures = [];
for (let round = 1; round <= ROUNDS; round++) {
	const upTo = next - 1;
	await waitUntil(`messages up to ${upTo} to be shown`, () => shownUpTo(upTo), 30000);
	const old = masterPort();
	await waitUntil(`the daemon to be connected to the master ${old}`, () => daemonConns(old) > 0, 20000);
	// every replica is in sync, so the sentinels have one to promote (FAILOVER refuses otherwise)
	await waitUntil('the replicas to be known to the sentinels', () =>
		redisCli(sentinels[0], 'SENTINEL replicas mymaster').split('\n').filter((l) => l === 'slave').length >= 2, 20000).catch(() => {});
	say(`round ${round}: master ${old}, ${daemonConns(old)} daemon connections on it; SENTINEL FAILOVER`);
	await waitUntil('the sentinel to accept the failover', () => {
		try { return redisCli(sentinels[0], 'SENTINEL FAILOVER mymaster') === 'OK'; } catch { return false; }
	}, 20000);
	await waitUntil('the sentinels to name a new master', () => masterPort() !== old, 30000);
	const tSwitch = Date.now();
	say(`round ${round}: the sentinels name ${masterPort()}; the old master ${old} is still ${role(old)}`);
	let left = null; // ms from the announcement to the daemon's last connection leaving the old node
	let demoted = null; // ms to Sentinel's reconfiguration of the old node
	await waitUntil('the daemon to leave the old master, or Sentinel to demote it', () => {
		const now = Date.now() - tSwitch;
		if (left === null && daemonConns(old) === 0) left = now;
		if (demoted === null && role(old) !== 'master') demoted = now;
		return left !== null || demoted !== null;
	}, 30000).catch((e) => say(e.message));
	say(`round ${round}: daemon left the old master after ${left === null ? 'never' : `${left} ms`}; ` +
		`Sentinel demoted it after ${demoted === null ? 'not yet' : `${demoted} ms`}`);
	// the same poll seeing both: the daemon left only with Sentinel's reconfiguration (it closes the clients)
	if (left === null || (demoted !== null && demoted <= left))
		failures.push(`round ${round}: the daemon was still on the old master ${old} when ${demoted === null ? 'the wait ended' : 'Sentinel demoted it'}`);
	// the old node becomes a replica of the new master before the next round
	await waitUntil(`${old} to be a replica`, () => role(old) === 'slave', 30000);
	await waitUntil('the daemon to be connected to the new master', () => daemonConns(masterPort()) > 0, 20000);
}
sending = false;
await sendLoop;

const ids = () => [...saved.values()];
await waitUntil('every message to be shown', () => ids().every((id) => client.seen.some((m) => m.id === id)), 60000)
	.catch((e) => say(e.message));
await waitUntil('the outbox to drain', async () => (await postgres.query(
	'SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL'))[0].n === 0, 20000).catch((e) => say(e.message));
await sleep(500); // a late duplicate would show up here

const verdict = shownOnce({ saved, byId, seen: client.seen });
const [{ unsent }] = await postgres.query('SELECT count(*)::int AS unsent FROM consumers.outbox WHERE sent_at IS NULL');
say(`saved ${saved.size}, ${verdict.text}; unsent: ${unsent}; duplicate jobs skipped by the inbox: ${daemon.duplicates}`);

client.socket.close();
await sender.stop();
await daemon.stop('SIGTERM');

failures.push(...verdict.failures);
if (unsent) failures.push(`${unsent} rows unsent`);
finish(failures);
