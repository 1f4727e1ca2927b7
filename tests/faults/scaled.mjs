// tests/faults/scaled.mjs - the scaled topology of the chaos soak (soak.sh --topology scaled), also the
// integration test faults.scaled (--scripted).
//
// One receiving service (workers, queue chat-messages) with four partitions on two Redis servers
// (partition p on shard p mod 2), two consumers that share the partitions by leases (a third one comes
// and goes), and three gateway-only daemons (--consume off). Consumers and gateways are separate
// processes so that every message a client is shown crossed the bus (no gateway consumed it itself)
// and each fault hits one role: a consumer's death moves leases and never drops a socket, a gateway's
// restart drops sockets and never moves a lease. On every gateway: a Socket.IO client with default
// transports (resumes by connection state recovery: pid + offset), a websocket-only Socket.IO client
// (resumes with auth.since) and a /ws client (reconnects with ?since=). Messages: one send_message loop
// per chat over many chats (the relay spreads them over the partitions), mixed with edits and deletes
// of the messages just sent (soak_lib.mjs's chatSender), and a real bullmq Queue adding to partition 1
// (on shard 1) for its own chat. Faults: a consumer holding leases SIGKILLed and
// restarted, a consumer joining (and, at random, leaving by SIGTERM), a gateway restarted (SIGTERM or
// SIGKILL), a Redis shard SIGKILLed and restarted from its AOF.
// At the end, against the inbox (the record) and what Postgres committed: every client was shown every
// message of its chats once, per chat in send order and overall in seq order, and every edit and delete
// Postgres committed once, after its message; every sent row and every acknowledged Queue.add reached
// the inbox once, and every change as one event row; nothing is left unsent.
//   node scaled.mjs [--seed N] [--seconds S] [--chats C] [--scripted]
import { execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { io } from 'socket.io-client';
import { resumingWs } from '../harness/ws_client.mjs';
import { Queue } from 'bullmq';
import { token } from '../harness/jwt.mjs';
import { Daemon } from '../harness/daemon.mjs';
import { redis, postgres, waitUntil, sleep, env } from './procs.mjs';
import { opt, flag, mulberry32, between, chatSender, faultSchedule, Shown } from './soak_lib.mjs';

const seed = opt('seed', Math.floor(Math.random() * 2 ** 31));
const SECONDS = opt('seconds', 90);
const CHATS = opt('chats', 12);
const SCRIPTED = flag('scripted');
const SENDER = 'consumers';
const QUEUE = 'chat-messages';
const PARTITIONS = 4;
const LEASE_TTL = 2000;
const QUEUE_CHAT = 3001; // the bullmq Queue's chat: 3001 mod 4 = partition 1, on shard 1
const QUEUE_PARTITION = 1;
const ports = env('DAEMON_PORTS').split(',').map(Number);

const rand = mulberry32(seed);
const paceRand = mulberry32(seed ^ 0x5bd1e995);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s  ${s}`);
console.log(`== chaos soak, scaled topology: seed ${seed}, ${SECONDS} s, ${CHATS} chats, ${PARTITIONS} partitions on 2 Redis shards, ` +
	`2 consumers (+1 coming and going), 3 gateways${SCRIPTED ? ', scripted faults' : ''} ==`);
if (!SCRIPTED) console.log(`   replay with: tests/faults/soak.sh --topology scaled --seed ${seed} --seconds ${SECONDS}`);

// Shards: shard 0 is the harness' Redis (procs.mjs' redis), shard 1 the second server (shards.sh).
const shards = [
	{ port: env('REDIS_PORT'), kill: () => redis.kill(), start: () => redis.start() },
	{ port: env('SHARD1_PORT'), kill: () => execSync(`kill -9 $(cat ${env('SHARD1_PIDFILE')})`), start: () => execSync(env('SHARD1_START'), { stdio: 'ignore' }) },
];
const redisGet = (shard, key) => {
	try {
		return execSync(`redis-cli -p ${shards[shard].port} GET ${key}`, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
	} catch {
		return ''; // the shard is down
	}
};
// a lease's holder: its identity (the value is <identity>#<process token>)
const leaseOf = (p) => redisGet(p % shards.length, `bull:${QUEUE}-p${p}:lease`).replace(/#[^#]*$/, '');
const holders = () => Array.from({ length: PARTITIONS }, (_, p) => leaseOf(p));

const common = ['--service', 'workers', '--queue', QUEUE];
const consumers = [0, 1, 2].map((i) => new Daemon({
	name: `consumer workers-c${i}`, port: ports[3 + i],
	flags: [...common, '--identity', `workers-c${i}`, '--lease-ttl', String(LEASE_TTL), '--lock-duration', '3000', '--stalled-interval', '2000'],
}));
const gateways = [0, 1, 2].map((i) => new Daemon({
	name: `gateway workers-g${i}`, port: ports[i],
	flags: [...common, '--consume', 'off', '--identity', `workers-g${i}`, '--ping-interval', '1000', '--ping-timeout', '2000'],
}));
const running = (d) => d.proc && d.proc.exitCode === null && d.proc.signalCode === null;

const chats = Array.from({ length: CHATS }, (_, c) => 1000 + c);
const allChats = [...chats, QUEUE_CHAT];

// A client records what it is shown (Shown, soak_lib.mjs): count per id, per-chat order by body
// ("c<chat> #<k>"), seq order, and the edits and deletes of the messages.
function recorder(name, kind, port, watches) {
	return { name, kind, port, watches, shown: new Shown() };
}

function sioClient(name, port, watches, websocketOnly) {
	const c = recorder(name, websocketOnly ? 'socket.io websocket-only' : 'socket.io default', port, watches);
	const t = token(watches, { sub: name, ttlSeconds: 7200 });
	// default transports: the library's connection state recovery (pid + offset) resumes it;
	// websocket-only: auth.since with the highest seq it was shown.
	const auth = websocketOnly ? (cb) => cb({ token: t, since: c.shown.lastSeq }) : { token: t };
	c.socket = io(`http://127.0.0.1:${port}`, {
		auth, reconnectionDelay: 100, reconnectionDelayMax: 1000, ...(websocketOnly ? { transports: ['websocket'] } : {}),
	});
	c.shown.listen(c.socket);
	c.ready = () => c.socket.connected;
	c.close = () => c.socket.close();
	return c;
}

function wsClient(name, port, watches) {
	const c = recorder(name, '/ws', port, watches);
	const t = token(watches, { sub: name, ttlSeconds: 7200 });
	const ws = resumingWs(() => `ws://127.0.0.1:${port}/ws?token=${t}&since=${c.shown.lastSeq}`,
		(f) => c.shown.frame(f), { minDelay: 200, maxDelay: 1000 });
	c.ready = ws.connected;
	c.close = ws.close;
	return c;
}

// The bullmq Queue's producer: jobs like the relay's on partition QUEUE_PARTITION's queue, one at a
// time; an acknowledged add must reach the inbox and the clients.
const queueAdds = { acknowledged: [], failed: 0, running: true };
async function queueProducer() {
	const shard = shards[QUEUE_PARTITION % shards.length];
	const q = new Queue(`${QUEUE}-p${QUEUE_PARTITION}`, { connection: { host: '127.0.0.1', port: Number(shard.port), maxRetriesPerRequest: null } });
	q.on('error', () => {});
	let k = 0;
	while (queueAdds.running) {
		const id = randomUUID();
		const data = { id, chat_id: QUEUE_CHAT, body: `c${QUEUE_CHAT} #${k++}`, created_at: new Date().toISOString() };
		try {
			await q.add('message.created', data, { jobId: id });
			queueAdds.acknowledged.push(id);
		} catch {
			queueAdds.failed++;
		}
		await sleep(between(50, 200, paceRand));
	}
	await q.close().catch(() => {});
}

const faults = {};
const count = (kind) => (faults[kind] = (faults[kind] ?? 0) + 1);
let failed = false;
const stopClean = async (d) => d.stop('SIGTERM').catch((e) => {
	say(`${d.name}: ${e.message}`);
	failed = true;
});
const leaseHolders = () => consumers.filter((d) => running(d) && holders().includes(d.flags[d.flags.indexOf('--identity') + 1]));
const identity = (d) => d.flags[d.flags.indexOf('--identity') + 1];

const FAULTS = {
	async 'consumer SIGKILL'() {
		const held = leaseHolders();
		if (!held.length) return say('fault: consumer SIGKILL skipped (no consumer holds a lease right now)');
		const victim = pick(held);
		say(`fault: SIGKILL ${victim.name}, holding partitions ${holders().map((h, p) => (h === identity(victim) ? p : null)).filter((p) => p !== null).join(',')}`);
		await victim.stop('SIGKILL');
		if (SCRIPTED) { // the others take its partitions over once its leases expire
			await waitUntil('the killed consumer\'s partitions to be taken over', () =>
				holders().every((h) => h !== '' && h !== identity(victim)), 20000);
			say(`  taken over: ${holders().join(' ')}`);
			return;
		}
		await sleep(between(200, 3000, rand));
		await victim.start();
	},
	async 'consumer joins or leaves'() {
		const down = consumers.filter((d) => !running(d));
		if (down.length) {
			const d = down[down.length - 1]; // the third consumer first: a new member, not a restart
			say(`fault: ${d.name} joins mid-stream`);
			await d.start();
			if (SCRIPTED) {
				await waitUntil(`${d.name} to get its share`, () => holders().includes(identity(d)), 20000);
				say(`  after the join: ${holders().join(' ')}`);
			}
			return;
		}
		const d = pick(consumers);
		say(`fault: ${d.name} leaves (SIGTERM: finishes its jobs, hands its leases over)`);
		await stopClean(d);
	},
	async 'gateway restart'() {
		const g = pick(gateways);
		const signal = SCRIPTED ? 'SIGKILL' : pick(['SIGTERM', 'SIGKILL']);
		const down = between(200, 2000, rand);
		say(`fault: ${g.name} restarted (${signal}, down ${down} ms): its clients reconnect and resume`);
		if (signal === 'SIGTERM') await stopClean(g);
		else await g.stop('SIGKILL');
		await sleep(down);
		await g.start();
	},
	async 'redis shard SIGKILL/restart'() {
		const s = SCRIPTED ? 1 : between(0, 1, rand);
		const down = between(500, 3000, rand);
		say(`fault: Redis shard ${s} SIGKILLed, restarted from its AOF after ${down} ms`);
		shards[s].kill();
		await sleep(down);
		shards[s].start();
	},
};

await postgres.query(`SELECT chat_outbox.set_partitions($1, ${PARTITIONS})`, [SENDER]);
for (const d of [...gateways, consumers[0], consumers[1]]) await d.start();
const clients = gateways.flatMap((g, i) => {
	// each client watches its own share of the chats (and the Queue's chat), different per client
	const watching = (j) => [...chats.filter((_, n) => (n + j) % 3 !== 0), QUEUE_CHAT];
	return [sioClient(`sio#${i}`, g.port, watching(3 * i), false), sioClient(`sio-ws#${i}`, g.port, watching(3 * i + 1), true),
		wsClient(`ws#${i}`, g.port, watching(3 * i + 2))];
});
await waitUntil('clients to connect', () => clients.every((c) => c.ready()), 15000);

const sent = { ok: 0, failed: 0, sending: true };
const senders = chats.map((chat) => chatSender(SENDER, chat, sent, paceRand, { changes: true }));
await waitUntil('the relay to write the layout key', () => redisGet(0, `bull:${QUEUE}:partitions`) === String(PARTITIONS), 20000);
await waitUntil('the two consumers to share the partitions', () => leaseHolders().length === 2, 20000);
say(`leases: ${holders().join(' ')}`);
const producer = queueProducer();

const deadline = t0 + SECONDS * 1000;
if (SCRIPTED) {
	for (const kind of ['consumer SIGKILL', 'consumer joins or leaves', 'gateway restart', 'redis shard SIGKILL/restart']) {
		await sleep(1500);
		count(kind);
		await FAULTS[kind]();
	}
	await sleep(1500);
} else {
	await faultSchedule(FAULTS, deadline, rand, faults, say);
	// the two consumers that are not the coming-and-going one run at the end, so the backlog drains
	for (const d of consumers.slice(0, 2)) if (!running(d)) await d.start();
}
sent.sending = false;
queueAdds.running = false;
await Promise.all([...senders, producer]);
say(`sending stopped: ${sent.ok} send_message and ${sent.changes ?? 0} edits or deletes acknowledged, ${sent.failed} failed or unknown (Postgres decides); ` +
	`${queueAdds.acknowledged.length} Queue.add acknowledged, ${queueAdds.failed} failed`);

// Truth: the inbox (the record) for the chats, once it holds every row Postgres committed and every
// acknowledged Queue.add (or the deadline passed: then they count as missing from the inbox). Then wait
// until every client has been shown all of its chats' rows.
const sentRows = await postgres.query(`SELECT id::text, version FROM ${SENDER}.messages WHERE chat_id = ANY($1::bigint[])`, [chats]);
const versions = new Map(sentRows.map((r) => [r.id, r.version])); // edits and deletes Postgres committed; a Queue.add has none
const changed = sentRows.reduce((n, r) => n + r.version, 0);
// the messages of the inbox (its edit and delete rows are counted apart, against versions)
const inboxRows = async () => (await postgres.query(`SELECT message_id::text AS id, chat_id::int AS chat FROM workers.inbox
	WHERE chat_id = ANY($1::bigint[]) AND target IS NULL`, [allChats])).map((r) => ({ ...r, version: versions.get(r.id) ?? 0 }));
let rows = [];
let inboxIds = new Set();
const notInInbox = () => sentRows.filter((r) => !inboxIds.has(r.id)).length + queueAdds.acknowledged.filter((id) => !inboxIds.has(id)).length;
await waitUntil('the inbox to hold every sent message and every acknowledged job', async () => {
	rows = await inboxRows();
	inboxIds = new Set(rows.map((r) => r.id));
	return notInInbox() === 0;
}, SCRIPTED ? 30000 : 90000, 250).catch((e) => say(e.message));
const truthFor = (c) => rows.filter((r) => c.watches.includes(r.chat));
const missing = (c) => c.shown.missing(truthFor(c));
await waitUntil('every client to be shown every message of its chats', () => clients.every((c) => missing(c) === 0), SCRIPTED ? 30000 : 90000)
	.catch((e) => say(e.message));
await sleep(1000);

const [{ unsent }] = await postgres.query(`SELECT count(*)::int AS unsent FROM ${SENDER}.outbox WHERE sent_at IS NULL`);
const [{ distinct }] = await postgres.query('SELECT count(DISTINCT message_id)::int AS distinct FROM workers.inbox');
const [{ total }] = await postgres.query('SELECT count(*)::int AS total FROM workers.inbox');
const missingFromInbox = notInInbox();
const lost = clients.reduce((n, c) => n + missing(c), 0);
const twice = clients.reduce((n, c) => n + c.shown.twice(), 0);
const chatOrder = clients.reduce((n, c) => n + c.shown.chatOrder, 0);
const seqOrder = clients.reduce((n, c) => n + c.shown.seqOrder, 0);
const [{ events }] = await postgres.query('SELECT count(*)::int AS events FROM workers.inbox WHERE chat_id = ANY($1::bigint[]) AND target IS NOT NULL', [chats]);
console.log('');
console.log(`faults injected: ${Object.entries(faults).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
console.log(`messages: ${sentRows.length} sent with send_message (+ ${changed} edits and deletes, ${events} in the inbox), ${queueAdds.acknowledged.length} added by a bullmq Queue; ` +
	`inbox ${rows.length} (${total - distinct} duplicate ids), missing from the inbox ${missingFromInbox}, unsent ${unsent}`);
console.log(`clients ${clients.length}: lost ${lost}   shown twice ${twice}   out of order per chat ${chatOrder}   out of seq order ${seqOrder}`);
for (const c of clients) {
	const gone = truthFor(c).filter((r) => !c.shown.seen.has(r.id)).slice(0, 5);
	const line = `  ${c.name} (${c.kind}, gateway port ${c.port}): shown ${c.shown.seen.size} of ${truthFor(c).length}, ` +
		`missing ${missing(c)} with the changes`;
	if (gone.length || c.shown.chatOrder || c.shown.seqOrder) {
		const where = gone.length ? await postgres.query(`SELECT chat_id, seq FROM workers.inbox WHERE message_id = ANY($1::uuid[]) ORDER BY seq`, [gone.map((r) => r.id)]) : [];
		console.log(`${line}; never shown: ${where.map((w) => `seq ${w.seq} (chat ${w.chat_id})`).join(', ') || '-'}; ` +
			`out of order ${c.shown.chatOrder}, out of seq order ${c.shown.seqOrder}`);
	} else console.log(line);
}
if (lost || twice || chatOrder || seqOrder || unsent || missingFromInbox || events !== changed || total !== distinct || sentRows.length === 0 || queueAdds.acknowledged.length === 0) failed = true;
clients.forEach((c) => c.close());
for (const d of [...gateways, ...consumers]) if (running(d)) await stopClean(d);
console.log(failed ? `FAIL (seed ${seed})` : 'PASS');
process.exit(failed ? 1 : 0);
