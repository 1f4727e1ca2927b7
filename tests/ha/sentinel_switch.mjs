// tests/ha/sentinel_switch.mjs - Sentinel moves the master away from a node that stays up, and the
// sentinel chat-outboxd watches dies between two such moves.
//
// Real processes: both directions (traffic.mjs): a sender per service calling send_message, the relay in
// Postgres writing through redis-sentinel://, two chat-outboxd (workers: consumers->workers; consumers:
// workers->consumers) reading through the same URL, and per direction a Socket.IO client (the real
// socket.io-client) and a plain /ws client counting what they are shown; a master, two replicas and
// three sentinels (sentinel_switch.sh).
//   1. messages flow both ways; each sender sends one every 100 ms through what follows. Each daemon
//      holds exactly one connection to the sentinels that stays (its Sentinel watch, named
//      <connection name>:sentinel-watch; CLIENT LIST on every sentinel), however many Redis
//      connections it has;
//   2. `SENTINEL FAILOVER mymaster` on the watched sentinel: it promotes a replica and announces it
//      while the old master keeps running. Sentinel reconfigures the old node as a replica (and closes
//      its clients) only seconds later: until then it is a master of its own that nobody replicates;
//   3. the test watches the daemons' connections on the old node (CLIENT LIST, by their names) and the
//      node's ROLE: both daemons must have left it before Sentinel demoted it. It prints how long after
//      the announcement the last connection left (a figure, not asserted);
//   4. the same again from the new master, but the sentinel the daemons watch is stopped (SIGSTOP: its
//      connections stay open and it tells nothing) and another sentinel leads the failover; once that one
//      names the new master, the stopped one is SIGKILLed. Each daemon's watch moves to another sentinel
//      (again exactly one) and asks it where the master is: the daemons must still leave the old master
//      before Sentinel demotes it (sentinel_switch.sh checks in their log that the question moved them).
// Fails if a daemon was still on the old node when Sentinel demoted it, if a daemon holds other than one
// watch, or if a message was lost, stored twice, shown twice or out of order on any client, or an outbox
// row stays unsent.
import { execSync } from 'node:child_process';
import { waitUntil, sleep, env } from '../faults/procs.mjs';
import { startDirection } from './traffic.mjs';
import { finish } from './verdict.mjs';

const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const sh = (cmd) => execSync(cmd, { encoding: 'utf8' }).trim();
const redisCli = (p, args) => sh(`redis-cli -p ${p} ${args}`);
const sentinels = env('SENTINEL_PORTS').split(' ').map(Number);
let alive = [...sentinels]; // the sentinels not killed by this test
const masterPort = () => Number(redisCli(alive[0], 'SENTINEL get-master-addr-by-name mymaster').split('\n')[1]);
const role = (p) => redisCli(p, 'ROLE').split('\n')[0];
const clientNames = (p) => redisCli(p, 'CLIENT LIST').split('\n').map((l) => / name=(\S*)/.exec(l)?.[1] ?? '');

const sides = [
	await startDirection({ direction: 'consumers->workers', port: Number(env('DAEMON_PORT')), chat: 32, kinds: ['socket.io', '/ws'] }),
	await startDirection({ direction: 'workers->consumers', port: Number(env('DAEMON_PORT2')), chat: 33, kinds: ['socket.io', '/ws'] }),
];
// a daemon's connections are all named chat-outboxd:<prefix>:<queue>:<identity>[:role]; identity <receiver>-test
const ofDaemon = (side, name) => name.startsWith('chat-outboxd:') && name.includes(`:${side.receiver}-test`);
const daemonConns = (p) => clientNames(p).filter((n) => sides.some((s) => ofDaemon(s, n))).length;
// watches(side): the sentinels holding a named connection of the daemon, with how many each
const watches = (side) => alive.map((p) => ({ p, names: clientNames(p).filter((n) => ofDaemon(side, n)) })).filter((w) => w.names.length);
const failures = [];
// oneWatch: every daemon holds one named connection on the sentinels, its watch; returns the sentinel watched
const oneWatch = async (when) => {
	let seen = [];
	await waitUntil(`one Sentinel watch per daemon ${when}`, () => {
		seen = sides.map((s) => watches(s));
		return seen.every((w) => w.length === 1 && w[0].names.length === 1 && w[0].names[0].endsWith(':sentinel-watch'));
	}, 10000).catch(() => {});
	for (const [i, w] of seen.entries()) {
		const text = w.map((x) => `${x.p}: ${x.names.join(' ')}`).join('; ') || 'none';
		say(`${sides[i].receiver} daemon's connections on the sentinels ${when}: ${text}`);
		if (!(w.length === 1 && w[0].names.length === 1 && w[0].names[0].endsWith(':sentinel-watch')))
			failures.push(`${sides[i].receiver} daemon ${when}: not exactly one sentinel watch (${text})`);
	}
	return seen[0][0]?.p ?? alive[0];
};

let next = 1;
let sending = true;
const sendLoops = sides.map(async (side) => {
	for (let n = 1; sending; n++) {
		await side.send(n);
		next = Math.max(next, n + 1);
		await sleep(100);
	}
});

const pidOf = (p) => /process_id:(\d+)/.exec(redisCli(p, 'INFO server'))[1];
let watched = await oneWatch('at start');
for (let round = 1; round <= 2; round++) {
	const upTo = next - 1;
	await waitUntil(`messages up to ${upTo} to be shown`, () => sides.every((s) => s.shownUpTo(upTo)), 30000);
	const old = masterPort();
	await waitUntil(`the daemons to be connected to the master ${old}`, () => sides.every((s) =>
		clientNames(old).some((n) => ofDaemon(s, n))), 20000);
	// round 2: the watched sentinel stops, and another one leads the failover
	let stopped = null;
	if (round === 2) {
		stopped = { port: watched, pid: pidOf(watched) };
		sh(`kill -STOP ${stopped.pid}`);
		alive = alive.filter((p) => p !== watched);
		say(`the watched sentinel ${watched} SIGSTOPped`);
	}
	const leader = alive.includes(watched) ? watched : alive[0];
	// every replica is in sync, so the sentinel has one to promote (FAILOVER refuses otherwise)
	await waitUntil('the replicas to be known to the sentinel', () =>
		redisCli(leader, 'SENTINEL replicas mymaster').split('\n').filter((l) => l === 'slave').length >= 2, 20000).catch(() => {});
	say(`round ${round}: master ${old}, ${daemonConns(old)} daemon connections on it; SENTINEL FAILOVER on ${leader}`);
	await waitUntil('the sentinel to accept the failover', () => {
		try { return redisCli(leader, 'SENTINEL FAILOVER mymaster') === 'OK'; } catch { return false; }
	}, 20000);
	await waitUntil('the sentinels to name a new master', () => Number(redisCli(leader,
		'SENTINEL get-master-addr-by-name mymaster').split('\n')[1]) !== old, 30000);
	const tSwitch = Date.now();
	if (stopped) {
		sh(`kill -9 ${stopped.pid}`);
		say(`the stopped sentinel ${stopped.port} SIGKILLed: the watches move`);
	}
	say(`round ${round}: the sentinels name ${masterPort()}; the old master ${old} is still ${role(old)}`);
	let left = null; // ms from the announcement to the daemons' last connection leaving the old node
	let demoted = null; // ms to Sentinel's reconfiguration of the old node
	await waitUntil('the daemons to leave the old master, or Sentinel to demote it', () => {
		const now = Date.now() - tSwitch;
		if (left === null && daemonConns(old) === 0) left = now;
		if (demoted === null && role(old) !== 'master') demoted = now;
		return left !== null || demoted !== null;
	}, 30000).catch((e) => say(e.message));
	say(`round ${round}: the daemons left the old master after ${left === null ? 'never' : `${left} ms`}; ` +
		`Sentinel demoted it after ${demoted === null ? 'not yet' : `${demoted} ms`}`);
	// the same poll seeing both: the daemons left only with Sentinel's reconfiguration (it closes the clients)
	if (left === null || (demoted !== null && demoted <= left))
		failures.push(`round ${round}: a daemon was still on the old master ${old} when ${demoted === null ? 'the wait ended' : 'Sentinel demoted it'}`);
	if (stopped) watched = await oneWatch('after the watched sentinel died');
	if (round === 2) break; // the last: no need to wait for Sentinel's reconfiguration of the old node
	// the old node becomes a replica of the new master before the next round
	await waitUntil(`${old} to be a replica`, () => role(old) === 'slave', 30000);
	await waitUntil('the daemons to be connected to the new master', () => sides.every((s) =>
		clientNames(masterPort()).some((n) => ofDaemon(s, n))), 20000);
}
sending = false;
await Promise.all(sendLoops);

await waitUntil('every message to be shown', () => sides.every((s) => s.shownUpTo(Infinity)), 60000).catch((e) => say(e.message));
await sleep(500); // a late duplicate would show up here
for (const side of sides) {
	const verdict = await side.verdict();
	for (const line of verdict.lines) say(line);
	failures.push(...verdict.failures);
}
for (const side of sides) await side.stop();
finish(failures);
