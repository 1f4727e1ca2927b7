// tests/cluster/daemon.mjs - chat-outboxd on a Redis Cluster, both directions, through a master's SIGKILL.
//
// Real processes: chat-outbox-relay relaying through redis-cluster:// (started by daemon.sh); three
// chat-outboxd on the same cluster URL: w1 and w2 for the service workers (they share the 6 partitions
// of queue "{chat-messages}" by leases, and show each other's rows over the bus), c1 for consumers
// (queue "{chat-replies}", 6 partitions); one socket.io client on each, every chat of its side; one
// sender loop per chat (12 a direction, tests/faults/soak_lib.mjs chatSender).
//   1. every master holds partitions (the 12 partition queues' slots over 3 masters), presence counts
//      both workers clients in every chat (the chats' keys on every master), and both workers daemons
//      hold leases;
//   2. the first seed node, a master holding partitions and the node every daemon subscribes on, is
//      SIGKILLed mid-stream; the cluster promotes its replica and the node is started again (it rejoins
//      as a replica); per client, the gap of the chats on that master's partitions (the last message
//      shown before the kill to the first shown of those sent after it) is printed and bounded;
//   3. a reshard under traffic moves a partition of "{chat-messages}" to another master; the longest
//      pause of its chats on w1's and w2's clients is printed and bounded;
//   4. the senders stop; every client must be shown every committed message once, each chat in send
//      order; each inbox holds each message once; every outbox row is sent. Duplicate jobs the inboxes
//      refused (the consumer's redelivery) are counted and printed.
// Env: PGURL, CLUSTER_PORTS, H_DIR, DAEMON_PORTS (three free ports), and daemon_export_settings';
// CLUSTER_CHAT_BASE (default 0) is added to every chat id, for a suite whose earlier checks used chats
// of their own; CLUSTER_CACERT for a TLS cluster (tests/harness/redis_cluster.mjs).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { io } from 'socket.io-client';
import { check, env, finish, sleep, waitUntil } from '../harness/check.mjs';
import { Daemon } from '../harness/daemon.mjs';
import { checkGap, clusterClient, masterOf as clusterMasterOf, planReshard, replicaUp, reshard, restartNode } from '../harness/redis_cluster.mjs';
import { token } from '../harness/jwt.mjs';
import { postgres } from '../faults/procs.mjs';
import { Shown, chatSender, mulberry32 } from '../faults/soak_lib.mjs';

const PARTITIONS = 6, CHATS = 12, AFTER_MS = 4000;
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const ports = env('CLUSTER_PORTS').split(' ').map(Number);
const [w1Port, w2Port, c1Port] = env('DAEMON_PORTS').split(' ').map(Number);

const daemon = (name, port, service, queue) => new Daemon({
	name: `chat-outboxd ${name}`, port,
	flags: ['--service', service, '--queue', queue, '--identity', name, '--ping-interval', '1000', '--ping-timeout', '2000',
		'--lease-ttl', '3000'],
});
const sides = [
	{ name: 'consumers->workers', sender: 'consumers', receiver: 'workers', queue: 'chat-messages', chats: [],
		daemons: [daemon('w1', w1Port, 'workers', 'chat-messages'), daemon('w2', w2Port, 'workers', 'chat-messages')] },
	{ name: 'workers->consumers', sender: 'workers', receiver: 'consumers', queue: 'chat-replies', chats: [],
		daemons: [daemon('c1', c1Port, 'consumers', 'chat-replies')] },
];
const CHAT_BASE = Number(process.env.CLUSTER_CHAT_BASE || 0);
for (let i = 1; i <= CHATS; i++) {
	sides[0].chats.push(CHAT_BASE + i);
	sides[1].chats.push(CHAT_BASE + 100 + i);
}

// slot -> the port of the master serving it now
const masterOf = async (slot) => (await clusterMasterOf(ports, slot)).port;
const admin = clusterClient(ports, { clusterRetryStrategy: () => 100 });
admin.on('error', () => {});
const partitionQueue = (queue, p) => `{${queue}-p${p}}`;
const slotOf = async (queue, p) => Number(await admin.cluster('KEYSLOT', `bull:${partitionQueue(queue, p)}:wait`));

for (const side of sides) await side.daemons.reduce((prev, d) => prev.then(() => d.start()), Promise.resolve());
say('daemons up: w1, w2 (workers), c1 (consumers)');

// 1. the slot spread, and the leases of both workers daemons
const owners = new Map(); // "queue p" -> master port
for (const side of sides)
	for (let p = 0; p < PARTITIONS; p++) owners.set(`${side.queue} ${p}`, await masterOf(await slotOf(side.queue, p)));
const spread = new Set(owners.values());
check(`every master holds partitions (${[...owners].map(([k, v]) => `${k}->${v}`).join(', ')})`, spread.size === 3);
// clients: one per daemon, every chat of its side
const clients = [];
for (const side of sides)
	for (const d of side.daemons) {
		const name = `${d.name.split(' ')[1]}-client`;
		const socket = io(`http://127.0.0.1:${d.port}`, { auth: { token: token(side.chats, { sub: name }) }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
		const c = { name, side, socket, shown: new Shown(), byChat: new Map() };
		c.shown.listen(socket);
		socket.on('message', (m) => {
			const list = c.byChat.get(Number(m.chat_id)) ?? [];
			list.push({ at: Date.now(), id: m.id, created: Date.parse(m.created_at ?? '') || 0 });
			c.byChat.set(Number(m.chat_id), list);
		});
		clients.push(c);
	}
await waitUntil('clients to connect', () => clients.every((c) => c.socket.connected), 15000);

const state = { sending: true, ok: 0, failed: 0 };
const pace = mulberry32(36);
const senders = sides.flatMap((side) => side.chats.map((chat) => chatSender(side.sender, chat, state, pace)));
await waitUntil('traffic shown on every client', () => clients.every((c) => c.shown.seen.size >= 30), 30000);
say(`flowing: ${state.ok} sends acknowledged`);
// presence on the cluster: each chat's keys in the slot of its tag, on every master; w1's and w2's clients
// (two users, two gateways) are both counted in every chat of their side
let lastPresence = null;
const online = async (chat) => (lastPresence = await new Promise((resolve) => clients[0].socket.emit('presence', { chat_id: chat }, resolve)))?.online;
for (const chat of sides[0].chats) // one request each 250 ms: presence allows 5 a second
	await waitUntil(`both workers clients present in chat ${chat}`, async () => (await online(chat)) === 2, 15000, 250)
		.catch((e) => { say(`presence answered ${JSON.stringify(lastPresence)}`); throw e; });
const presenceMasters = new Set();
for (const chat of sides[0].chats)
	presenceMasters.add(await masterOf(Number(await admin.cluster('KEYSLOT', `bull:chat_outbox:chat:{${chat}}:presence`))));
check(`presence: 2 users online in each of chats ${sides[0].chats.join(',')}, their keys on ${presenceMasters.size} masters`,
	presenceMasters.size === 3);
// the layout (6 partitions) is the relay's, written before its first job: the leases follow it
await waitUntil('every partition leased', async () => {
	for (const side of sides)
		for (let p = 0; p < PARTITIONS; p++)
			if (!(await admin.get(`bull:${partitionQueue(side.queue, p)}:lease`))) return false;
	return true;
}, 30000);
const holders = new Set();
for (let p = 0; p < PARTITIONS; p++) holders.add((await admin.get(`bull:${partitionQueue('chat-messages', p)}:lease`)).split('#')[0]);
check(`w1 and w2 share the partitions of {chat-messages} (lease holders: ${[...holders].join(', ')})`, holders.size === 2);
say('leases held; killing a master next');

// 2. a master SIGKILLed mid-stream
// the first seed node: a master holding partitions, and the node every daemon's subscriber is on
const victim = ports[0];
check(`the first seed node ${victim} is a master holding partitions`, spread.has(victim));
const [victimQueue, victimPartition] = [...owners].find(([, port]) => port === victim)[0].split(' ');
const pid = execFileSync('cat', [`${env('H_DIR')}/node-${victim}/redis.pid`], { encoding: 'utf8' }).trim();
const hit = new Map(sides.map((side) => [side.name, side.chats.filter((chat) => owners.get(`${side.queue} ${chat % PARTITIONS}`) === victim)]));
const killedAt = Date.now();
process.kill(Number(pid), 'SIGKILL');
say(`SIGKILLed master ${victim} (chats on it: ${[...hit].map(([k, v]) => `${k} ${v.join(',')}`).join('; ')})`);
// per client, over the chats of the killed master's partitions: the last message shown before the kill,
// and the first shown of those sent after it (what was in flight before the kill may still arrive first);
// "sent after" by the message's created_at, its transaction's start on this machine's clock
const shownOfHit = (c) => hit.get(c.side.name).flatMap((chat) => c.byChat.get(chat) ?? []).sort((x, y) => x.at - y.at);
const firstSentAfter = (c) => shownOfHit(c).find((s) => s.created > killedAt);
// the cluster promotes the replica (cluster-node-timeout); the killed node is started again at once, as
// its supervisor would, and rejoins as the new master's replica: until then that master has none, and
// the relay's WAIT for one replica (--redis-min-replicas 1) rolls its passes back
const victimSlot = await slotOf(victimQueue, Number(victimPartition));
await waitUntil('the replica promoted', async () => (await masterOf(victimSlot)) !== victim, 30000);
say(`failover: ${await masterOf(victimSlot)} serves partition ${victimPartition} of {${victimQueue}} ${Date.now() - killedAt} ms after the kill`);
const restarted = await restartNode(victim, Number(pid));
await waitUntil(`${victim} a replica again`, () => replicaUp(victim), 30000);
say(`${victim} started again: a replica, ${Date.now() - killedAt} ms after the kill`);
await waitUntil('every client shown a message of the killed master\'s chats sent after the kill',
	() => clients.every((c) => firstSentAfter(c)), 60000);
for (const c of clients) {
	// the gap: the longest silence on those chats from the last message shown before the kill to the
	// first shown of those sent after it
	const shown = shownOfHit(c);
	const end = firstSentAfter(c).at;
	let prev = shown.filter((s) => s.at < killedAt).pop()?.at ?? killedAt, gap = 0;
	for (const s of shown) if (s.at >= killedAt && s.at <= end) { gap = Math.max(gap, s.at - prev); prev = s.at; }
	say(`gap on ${c.name}: ${gap} ms (the first message sent after the kill shown ${end - killedAt} ms after it)`);
	checkGap(`${c.name}: gap after the master's SIGKILL`, gap);
}
await sleep(AFTER_MS);

// 3. a reshard under traffic: the partition of {chat-messages} whose slot is nearest its master's first
// slot moves to another master (redis-cli --cluster reshard); its consumer follows MOVED (and ASK while
// the slot migrates)
const mSlots = [];
for (let p = 0; p < PARTITIONS; p++) mSlots.push(await slotOf('chat-messages', p));
const plan = await planReshard(ports, mSlots);
const r = mSlots.indexOf(plan.slot);
say(`reshard: ${plan.count} slot(s) from ${plan.from.port} to ${plan.to.port}, partition ${r} of {chat-messages} among them`);
writeFileSync(`${env('H_DIR')}/reshard-target`, String(plan.to.port)); // daemon.sh looks for the daemons' MOVED to it
const reshardAt = Date.now();
check(`redis-cli --cluster reshard exited 0`, (await reshard(plan)) === 0);
const reshardEnd = Date.now();
say(`reshard took ${reshardEnd - reshardAt} ms`);
// every node learns the slot's new owner by the cluster's gossip: the first node that answers may lag
await waitUntil(`partition ${r}'s slot on ${plan.to.port}`, async () => (await masterOf(plan.slot)) === plan.to.port, 10000);
const movedChats = sides[0].chats.filter((chat) => chat % PARTITIONS === r);
await waitUntil(`messages of partition ${r} shown after the reshard`, () => clients.filter((c) => c.side === sides[0]).every((c) =>
	movedChats.some((chat) => (c.byChat.get(chat) ?? []).some((e) => e.at > reshardEnd))), 30000);
await sleep(1000);
for (const c of clients.filter((x) => x.side === sides[0])) {
	// the longest pause between two messages of the moved partition from the reshard's start to a second after it
	const times = movedChats.flatMap((chat) => c.byChat.get(chat) ?? []).map((e) => e.at).filter((at) => at >= reshardAt - 1000).sort((x, y) => x - y);
	let pause = 0;
	for (let i = 1; i < times.length && times[i - 1] <= reshardEnd + 1000; i++) pause = Math.max(pause, times[i] - times[i - 1]);
	say(`longest pause of partition ${r}'s chats on ${c.name} around the reshard: ${pause} ms`);
	checkGap(`${c.name}: pause around the reshard`, pause);
}

// 4. stop sending; Postgres is the truth
state.sending = false;
await Promise.all(senders);
say(`sending stopped: ${state.ok} sends acknowledged, ${state.failed} failed or unknown (Postgres decides)`);
const truth = new Map();
for (const side of sides)
	truth.set(side.name, await postgres.query(`SELECT id::text, chat_id::int, version FROM ${side.sender}.messages WHERE chat_id = ANY($1::bigint[])`, [side.chats]));
await waitUntil('every client shown every committed message', () => clients.every((c) => c.shown.missing(truth.get(c.side.name)) === 0), 60000)
	.catch((e) => say(e.message));
await sleep(1000);
for (const side of sides) {
	const rows = truth.get(side.name);
	const [{ inbox, distinct }] = await postgres.query(`SELECT count(*)::int AS inbox, count(DISTINCT message_id)::int AS distinct
		FROM ${side.receiver}.inbox WHERE chat_id = ANY($1::bigint[]) AND target IS NULL`, [side.chats]);
	const [{ unsent }] = await postgres.query(`SELECT count(*)::int AS unsent FROM ${side.sender}.outbox WHERE sent_at IS NULL`);
	const mine = clients.filter((c) => c.side === side);
	const lost = Math.max(...mine.map((c) => c.shown.missing(rows)));
	const twice = mine.reduce((n, c) => n + c.shown.twice(), 0);
	const order = mine.reduce((n, c) => n + c.shown.chatOrder, 0);
	const dups = side.daemons.reduce((n, d) => n + d.duplicates, 0);
	say(`${side.name}: sent ${rows.length}, inbox ${inbox} (${inbox - distinct} stored twice), lost ${lost}, shown twice ${twice}, ` +
		`out of order ${order}, unsent ${unsent}, duplicate jobs refused by the inbox ${dups}`);
	check(`${side.name}: nothing lost`, lost === 0);
	check(`${side.name}: nothing shown twice`, twice === 0);
	check(`${side.name}: nothing out of order`, order === 0);
	check(`${side.name}: each message stored once`, inbox === rows.length && distinct === inbox);
	check(`${side.name}: every outbox row sent`, unsent === 0);
}
for (const c of clients) c.socket.close();
for (const side of sides) for (const d of side.daemons) await d.stop('SIGTERM');
admin.disconnect();
restarted.kill('SIGKILL'); // started by this peer, not by the harness: stopped here
finish();
