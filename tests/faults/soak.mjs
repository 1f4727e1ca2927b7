// tests/faults/soak.mjs - a chaos soak that counts every message.
//
// Both directions, many chats, several socket.io clients per side, and a seeded random schedule of
// real faults: SIGKILL of either daemon, Redis stop/start (AOF on) and SIGSTOP/SIGCONT (a hung
// Redis), Postgres fast and immediate restarts, SIGKILL of the relay worker, a long transaction
// holding outbox rows, a send that commits late with a lower outbox id, a client that disconnects
// and catches up, hand-written outbox rows whose payload id names one of the queue's own Redis keys
// (wait, meta, marker, ...), and a /ws client that resumes from 0 and never reads. At the end it
// checks, against what Postgres committed:
//   lost = 0, shown twice = 0, per-chat order violations = 0, unsent = 0, inbox rows = sent rows.
// The senders also edit and delete some of their messages: each change is counted like a message
// (lost: committed, messages.version, but never shown; twice: one event's seq shown twice; out of
// order: a change shown before its message).
//   node soak.mjs [--seed N] [--seconds S] [--chats C] [--clients K]
// The seed is printed; the same seed replays the same fault schedule.
import pg from 'pg';
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { token } from '../harness/jwt.mjs';
import { DIRECTIONS, receivingDaemon, redis, postgres, waitUntil, sleep, env } from './procs.mjs';
import { opt, mulberry32, between as pickBetween, chatSender as sendLoop, faultSchedule, Shown } from './soak_lib.mjs';

const seed = opt('seed', Math.floor(Math.random() * 2 ** 31));
const SECONDS = opt('seconds', 90);
const CHATS = opt('chats', 6);
const CLIENTS = opt('clients', 3);
const ports = (process.env.DAEMON_PORTS || '').split(',').map(Number);

const rand = mulberry32(seed);
const paceRand = mulberry32(seed ^ 0x5bd1e995);
const between = (lo, hi, r = rand) => pickBetween(lo, hi, r);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s  ${s}`);
console.log(`== chaos soak: seed ${seed}, ${SECONDS} s, ${CHATS} chats per direction, ${CLIENTS} clients per side ==`);
console.log(`   replay with: tests/faults/soak.sh --seed ${seed} --seconds ${SECONDS}`);

const sides = Object.entries(DIRECTIONS).map(([name, d], i) => ({
	name, ...d, chats: Array.from({ length: CHATS }, (_, c) => 1000 * (i + 1) + c),
	lateChat: 1000 * (i + 1) + 500, // only late commits go here, so they don't take part in the order checks
	daemon: receivingDaemon({ service: d.receiver, queue: d.queue, port: ports[i],
		extra: ['--lock-duration', '3000', '--stalled-interval', '2000'] }),
}));

// Clients: each watches every chat of its side; it resumes from the highest seq it saw. What it is
// shown is counted by Shown (soak_lib.mjs), messages and their edits and deletes alike.
function client(side, k) {
	const c = { name: `${side.receiver}#${k}`, shown: new Shown() };
	const t = token([...side.chats, side.lateChat], { sub: c.name, ttlSeconds: 7200 });
	c.socket = io(`http://127.0.0.1:${side.daemon.port}`, {
		auth: (cb) => cb({ token: t, since: c.shown.lastSeq }), reconnectionDelay: 100, reconnectionDelayMax: 1000,
	});
	c.shown.listen(c.socket);
	return c;
}

const sent = { ok: 0, failed: 0, sending: true };
const chatSender = (side, chat) => sendLoop(side.sender, chat, sent, paceRand, { changes: true });

const faults = {};
const FAULTS = {
	async 'daemon SIGKILL'() {
		const side = pick(sides);
		say(`fault: SIGKILL chat-outboxd ${side.receiver}`);
		await side.daemon.stop('SIGKILL');
		await sleep(between(200, 1500));
		await side.daemon.start();
	},
	async 'redis stop/start'() {
		const down = between(500, 3000);
		say(`fault: Redis stopped for ${down} ms`);
		redis.stop();
		await sleep(down);
		redis.start();
	},
	async 'redis SIGSTOP/SIGCONT'() {
		const hung = between(500, 3000);
		say(`fault: Redis hung (SIGSTOP) for ${hung} ms`);
		redis.pause();
		await sleep(hung);
		redis.resume();
	},
	// A restart is injected into a running server: first the wait for the crash recovery a previous
	// fault started (a relay SIGKILL, an immediate restart) to end. A fast shutdown that reached
	// PostgreSQL 15 inside the first seconds of its crash recovery once hung the postmaster for a
	// minute ("redo starts", then nothing, until an immediate shutdown): a fault of Postgres's own
	// restart logic, not one this soak is about (docs/faults.md).
	async 'postgres fast restart'() {
		await postgres.query('SELECT 1');
		say('fault: pg_ctl restart -m fast');
		postgres.restart('fast');
	},
	async 'postgres immediate restart'() {
		await postgres.query('SELECT 1');
		say('fault: pg_ctl restart -m immediate (crash recovery)');
		postgres.restart('immediate');
	},
	async 'relay SIGKILL'() {
		const rows = await postgres.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'chat_outbox relay'");
		if (!rows.length) return say('fault: relay SIGKILL skipped (no relay running right now)');
		say(`fault: SIGKILL relay worker pid ${rows[0].pid} (the postmaster crash-restarts the cluster)`);
		process.kill(rows[0].pid, 'SIGKILL');
		await sleep(500);
	},
	async 'long transaction holding the relay\'s cursor'() {
		// the outbox's rows are written once; what a relay pass moves is its cursor: holding it holds
		// the pass (and, with the transaction's xid, the outbox's rotation) for that long
		const side = pick(sides);
		const hold = between(500, 3000);
		say(`fault: a transaction holds ${side.sender}'s relay cursors FOR UPDATE for ${hold} ms`);
		const c = new pg.Client({ connectionString: env('PGURL') });
		c.on('error', () => {});
		try {
			await c.connect();
			await c.query('BEGIN');
			await c.query('SELECT partition FROM chat_outbox.outbox_cursors WHERE service = $1 FOR UPDATE', [side.sender]);
			await sleep(hold);
			await c.query('ROLLBACK');
		} catch { /* Postgres may be restarting */ }
		await c.end().catch(() => {});
	},
	async 'late commit with a lower outbox id'() {
		const side = pick(sides);
		const chat = side.lateChat;
		const wait = between(300, 2000);
		say(`fault: a send_message commits ${wait} ms late, after later outbox ids were relayed`);
		const c = new pg.Client({ connectionString: env('PGURL') });
		c.on('error', () => {});
		try {
			await c.connect();
			await c.query('BEGIN');
			await c.query(`SELECT id FROM ${side.sender}.send_message($1, $2)`, [chat, `late ${Date.now()}`]);
			await sleep(wait);
			await c.query('COMMIT');
			sent.ok++;
		} catch { /* counted from Postgres at the end either way */ }
		await c.end().catch(() => {});
	},
	async 'hand-written rows with hostile job ids'() {
		// A payload id equal to a key BullMQ keeps under the queue must never become that key; the
		// messages sent around these rows must all arrive (checked at the end like every other).
		const side = pick(sides);
		const ids = pick([['wait', 'meta'], ['marker', 'events'], ['active', 'id'], ['paused', 'completed'], ['failed', 'delayed']]);
		say(`fault: hand-written ${side.sender}.outbox rows with payload ids ${ids.join(', ')}`);
		for (const id of ids) {
			await postgres.query(`INSERT INTO ${side.sender}.outbox (event, payload)
				VALUES ('message.created', pg_catalog.jsonb_build_object('id', $1::text, 'chat_id', $2::bigint, 'body', 'hostile'))`,
			[id, side.lateChat]);
		}
	},
	async 'client that never reads'() {
		// A /ws client resuming from 0 that stops reading: it may be closed, but it must not stall or
		// take memory from the clients that do read (their counts are checked at the end).
		const side = pick(sides);
		const hold = between(2000, 6000);
		say(`fault: a /ws client of ${side.receiver} resumes from 0 and reads nothing for ${hold} ms`);
		const t = token([...side.chats, side.lateChat], { sub: 'never-reads', ttlSeconds: 600 });
		const ws = new WebSocket(`ws://127.0.0.1:${side.daemon.port}/ws?token=${t}&since=0`);
		ws.on('error', () => {});
		ws.on('upgrade', (res) => res.socket.pause());
		ws.on('open', () => ws._socket.pause());
		await sleep(hold);
		ws.terminate();
	},
	async 'client disconnect and catch-up'() {
		const side = pick(sides);
		const c = pick(side.clients);
		const away = between(300, 3000);
		say(`fault: client ${c.name} disconnects for ${away} ms`);
		c.socket.disconnect();
		await sleep(away);
		c.socket.connect();
	},
};

for (const side of sides) await side.daemon.start();
for (const side of sides) side.clients = Array.from({ length: CLIENTS }, (_, k) => client(side, k));
await waitUntil('clients to connect', () => sides.every((s) => s.clients.every((c) => c.socket.connected)), 15000);
const senders = sides.flatMap((side) => side.chats.map((chat) => chatSender(side, chat)));

const deadline = t0 + SECONDS * 1000;
await faultSchedule(FAULTS, deadline, rand, faults, say);
sent.sending = false;
await Promise.all(senders);
say(`sending stopped: ${sent.ok} sends and ${sent.changes ?? 0} edits or deletes acknowledged, ${sent.failed} failed or unknown (Postgres decides)`);

// Truth: what Postgres committed, per side; then wait until every client has been shown all of it.
const truth = {};
for (const side of sides) {
	const chats = [...side.chats, side.lateChat];
	truth[side.name] = await postgres.query(`SELECT id::text, chat_id::int, version FROM ${side.sender}.messages WHERE chat_id = ANY($1::bigint[])`, [chats]);
}
// a message not shown, and each of its changes not shown, count one each
const missing = (side, c) => c.shown.missing(truth[side.name]);
await waitUntil('every client to be shown every committed message', () =>
	sides.every((side) => side.clients.every((c) => missing(side, c) === 0)), 90000).catch((e) => say(e.message));
await sleep(1000);

let failed = false;
console.log('');
console.log(`faults injected: ${Object.entries(faults).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
for (const side of sides) {
	const rows = truth[side.name];
	const [{ unsent }] = await postgres.query(`SELECT count(*)::int AS unsent FROM ${side.sender}.outbox WHERE sent_at IS NULL`);
	const [{ inbox, events }] = await postgres.query(`SELECT count(*) FILTER (WHERE target IS NULL)::int AS inbox,
		count(*) FILTER (WHERE target IS NOT NULL)::int AS events FROM ${side.receiver}.inbox WHERE chat_id = ANY($1::bigint[])`,
		[[...side.chats, side.lateChat]]);
	const changed = rows.reduce((n, m) => n + m.version, 0);
	const lost = Math.max(...side.clients.map((c) => missing(side, c)));
	const twice = side.clients.reduce((n, c) => n + c.shown.twice(), 0);
	const violations = side.clients.reduce((n, c) => n + c.shown.chatOrder, 0);
	console.log(`${side.name}: sent ${rows.length} + ${changed} edits and deletes   inbox ${inbox} + ${events}   lost ${lost}   ` +
		`shown twice ${twice}   order violations ${violations}   unsent ${unsent}   clients ${side.clients.length}`);
	for (const c of side.clients) { // enough detail to find the cause of a loss from the logs
		const gone = rows.filter((m) => !c.shown.seen.has(m.id)).slice(0, 5);
		if (!gone.length) continue;
		const where = await postgres.query(`SELECT message_id::text AS id, chat_id, seq, received_at::text FROM ${side.receiver}.inbox
			WHERE message_id = ANY($1::uuid[]) ORDER BY seq`, [gone.map((m) => m.id)]);
		console.log(`  ${c.name} was never shown: ${where.map((w) => `seq ${w.seq} (chat ${w.chat_id}, inbox ${w.received_at})`).join(', ')}`);
	}
	if (lost || twice || violations || unsent || inbox !== rows.length || events !== changed) failed = true;
}
for (const side of sides) {
	side.clients.forEach((c) => c.socket.close());
	await side.daemon.stop('SIGTERM').catch((e) => { say(e.message); failed = true; });
}
console.log(failed ? `FAIL (seed ${seed})` : 'PASS');
process.exit(failed ? 1 : 0);
