// tests/ha/sentinel_live_master.mjs - a failover of a master that stays alive, under steady traffic, counting
// per message what the relay committed against what the clients were shown.
//
// Real processes (sentinel_live_master.sh): a master M, a replica R1 that Sentinel promotes, a replica R2 that it
// cannot move, three sentinels; the relay (the extension's or chat-outbox-relay) with redis_min_replicas = 1; both
// directions of traffic.mjs (a sender process per service calling send_message every SEND_EVERY_MS, a receiving
// chat-outboxd each, a Socket.IO and a plain /ws client each).
//   1. messages flow both ways and are shown;
//   2. `SENTINEL FAILOVER mymaster` on the sentinel the first daemon watches, so its +promoted-slave (about a
//      second after the promotion) moves the daemons off M (docs/ha.md, Discovery step 4): then nothing consumes
//      what M takes. The promotion is R1 answering ROLE master; M stays master, with R2 acknowledging the relay's
//      WAIT 1, until Sentinel demotes it (after its failover-timeout and the +switch-master that follows).
//      Meanwhile the test reads, by message id, which messages committed since the promotion have jobs on M and
//      not on R1: the jobs the old master took after the promotion (a figure; read while M still answers ROLE
//      master, so before its resync);
//   3. the senders go on until a message committed after the demotion is shown on every client (the relay is
//      writing to R1 again), then stop; the test waits until every committed message is shown, at most
//      SHOWN_WITHIN_MS after the last send (a failure deadline, not a pause).
// Fails if a committed message is never shown (lost), shown twice or out of order on any client, stored twice in
// an inbox, or an outbox row stays unsent. Writes old_master_took=<n> to $FIGURES for the suite's log check.
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import IORedis from 'ioredis';
import { waitUntil, sleep, env } from '../faults/procs.mjs';
import { startDirection } from './traffic.mjs';
import { finish } from './verdict.mjs';

const SEND_EVERY_MS = 100;
const SHOWN_WITHIN_MS = 30000;
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const redisCli = (p, args) => execSync(`redis-cli -p ${p} ${args}`, { encoding: 'utf8' }).trim();
const sentinels = env('SENTINEL_PORTS').split(' ').map(Number);
const role = (p) => redisCli(p, 'ROLE').split('\n')[0];
const clientNames = (p) => redisCli(p, 'CLIENT LIST').split('\n').map((l) => / name=(\S*)/.exec(l)?.[1] ?? '');
// every sentinel names p as master (the leader from its +promoted-slave on, the others once they heard of it)
const named = (p) => sentinels.every((s) => Number(redisCli(s, 'SENTINEL get-master-addr-by-name mymaster').split('\n')[1]) === p);

const sides = [
	await startDirection({ direction: 'consumers->workers', port: Number(env('DAEMON_PORT')), chat: 41, kinds: ['socket.io', '/ws'] }),
	await startDirection({ direction: 'workers->consumers', port: Number(env('DAEMON_PORT2')), chat: 42, kinds: ['socket.io', '/ws'] }),
];
const old = Number(env('REDIS_PORT'));
const promoted = Number(env('REPLICA_PORT'));
say(`master ${old}, replicas ${promoted} (Sentinel promotes it) and ${env('R2_PORT')} (Sentinel can neither promote nor move it)`);

let sending = true;
let sent = 0;
const sendLoops = sides.map(async (side) => {
	for (let n = 1; sending; n++) {
		await side.send(n);
		sent++;
		await sleep(SEND_EVERY_MS);
	}
});
const lastSaved = () => Math.min(...sides.map((s) => s.saved.size));
const shownAll = (upTo) => sides.every((s) => s.shownUpTo(upTo));

await waitUntil('messages 1-20 to be shown both ways', () => lastSaved() >= 20 && shownAll(20), 30000);
// the daemons' connections are named chat-outboxd:<prefix>:<queue>:<identity>:...; their Sentinel watch ends in :sentinel-watch
const watchOf = (side) => sentinels.find((p) => clientNames(p).some((n) => n.startsWith('chat-outboxd:') &&
	n.includes(`:${side.receiver}-test`) && n.endsWith(':sentinel-watch')));
let leader;
await waitUntil('the first daemon to watch a sentinel', () => (leader = watchOf(sides[0])), 10000);
say(`the daemons watch sentinels ${sides.map(watchOf).join(' and ')}; SENTINEL FAILOVER on ${leader}`);
await waitUntil('the sentinel to accept the failover', () => {
	try { return redisCli(leader, 'SENTINEL FAILOVER mymaster') === 'OK'; } catch { return false; }
}, 20000);
await waitUntil(`${promoted} to be promoted`, () => role(promoted) === 'master', 20000);
const tPromoted = Date.now();
const sentAtPromotion = sent;
const savedAtPromotion = sides.map((s) => s.saved.size); // a side's messages 1..n, each committed before the next
say(`${promoted} promoted; ${old} is still ${role(old)}`);

// the messages committed after the promotion whose jobs the old master holds and the promoted one does not
const nodes = { old: new IORedis({ port: old }), promoted: new IORedis({ port: promoted }) };
for (const node of Object.values(nodes)) node.on('error', () => {}); // Sentinel closes the old master's clients when it demotes it
const roleOf = async (node) => (await node.call('ROLE'))[0];
const exists = async (node, keys) => {
	const p = node.pipeline();
	for (const k of keys) p.exists(k);
	return (await p.exec()).map(([, v]) => v === 1);
};
let onOldOnly = 0;
let tSwitch = null;
let tDemoted = null;
await waitUntil(`${old} to be demoted`, async () => {
	if (tSwitch === null && named(promoted)) tSwitch = Date.now();
	if ((await roleOf(nodes.old)) !== 'master') return (tDemoted = Date.now());
	const keys = sides.flatMap((s, i) => [...s.saved.entries()].filter(([n]) => n > savedAtPromotion[i])
		.map(([, id]) => `bull:${s.queue}:${id}`));
	const [onOld, onNew] = [await exists(nodes.old, keys), await exists(nodes.promoted, keys)];
	// still master after the read: what was read is its data from before any resync
	if ((await roleOf(nodes.old)) === 'master') onOldOnly = onOld.filter((o, i) => o && !onNew[i]).length;
	return false;
}, 60000, 200);
nodes.old.disconnect();
nodes.promoted.disconnect();
say(`the sentinels named ${promoted} ${tSwitch === null ? 'after the demotion' : `${tSwitch - tPromoted} ms after the promotion`}; ` +
	`${old} demoted ${tDemoted - tPromoted} ms after it; ${sent - sentAtPromotion} messages committed in between, ` +
	`${onOldOnly} of them with jobs on the old master only`);
fs.writeFileSync(env('FIGURES'), `old_master_took=${onOldOnly}\n`);

// the relay writes to the new master again: a message committed from now on is shown on every client
const after = sides.map((s) => s.saved.size + 1);
await waitUntil('a message committed after the demotion to be shown', () =>
	sides.every((s, i) => s.saved.size >= after[i] && s.clients.every((c) => c.seen.some((m) => m.id === s.saved.get(after[i])))), 30000)
	.catch((e) => say(e.message));
sending = false;
await Promise.all(sendLoops);
say(`${sent} messages sent (${sides.map((s) => `${s.name}: ${s.saved.size}`).join(', ')}); waiting for every one to be shown`);
await waitUntil('every committed message to be shown', () => shownAll(Infinity), SHOWN_WITHIN_MS).catch((e) => say(e.message));
await sleep(500); // a late duplicate would show up here

const failures = [];
for (const side of sides) {
	const verdict = await side.verdict();
	for (const line of verdict.lines) say(line);
	failures.push(...verdict.failures);
	const c = verdict.counts;
	say(`${side.name}: sent ${side.saved.size}; per client lost / twice / out of order: ` +
		c.map((x) => `${x.client} ${x.lost}/${x.twice}/${x.reordered}`).join(', '));
}
say(`figures: ${sent} messages sent, the old master took ${onOldOnly} jobs after the promotion`);
for (const side of sides) await side.stop();
finish(failures);
