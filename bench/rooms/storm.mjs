// bench/rooms/storm.mjs - a join storm into one big room (bench/rooms/run.sh): N users, all members of one chat,
// connect over /ws BATCH at a time; then one message is sent to the chat. Prints one JSON line: time to all
// welcomed and to every chat_state, frames each socket received from its welcome until the storm settled
// (p50 / p99 / max, and by type; the chat_states without their unread count), the daemon's CPU and RSS over the
// storm, and the time from the send to the last socket holding the message.
//   node storm.mjs <port> <pid> <members> <batch>     (env PGURL, CHAT_OUTBOXD_JWT_SECRET; NODE_PATH tests/node_modules)
// HISTORY (default 0): that many messages are put in the chat's inbox before the storm and each socket resumes
// after one of them (?since=, spread over them: socket i after the (i*7 mod HISTORY)-th, every third from before
// the first), so the storm is also a storm of catch-ups; printed: the messages each was replayed, whether every
// socket got exactly those above its cursor, and the gateway's database reads for the storm by its /metrics.
//
// A connect that fails before its welcome is counted by why and tried again (100 ms backoff doubling to 2 s), at
// most ATTEMPTS times. "Settled" is when every socket has its chat_state and no frame arrived for QUIET_MS
// (presence frames of a coalescing gateway come once an interval after the last join).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const WebSocket = require('ws');
const jwt = require('jsonwebtoken');
const pg = require('pg');
const [port, pid, members, batch] = process.argv.slice(2);
const N = Number(members), B = Number(batch);
const CHAT = 777, ATTEMPTS = 8, QUIET_MS = 2500, HISTORY = Number(process.env.HISTORY || 0);
const SECRET = process.env.CHAT_OUTBOXD_JWT_SECRET;
const exp = Math.floor(Date.now() / 1000) + 3600;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const status = (field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const cpuMs = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };

const sockets = []; // {ws, frames, byType, state, welcomedAt, message, since, replayed}
let lastFrameAt = performance.now(), retries = 0, failed = 0, dropped = 0, withoutUnread = 0;
const failures = {};
const byType = {};

const attempt = (i) => new Promise((resolve, reject) => {
	const token = jwt.sign({ sub: `member-${i}`, name: `Member ${i}`, chats: [CHAT], exp }, SECRET, { algorithm: 'HS256' });
	const since = HISTORY ? (i % 3 === 0 ? history[0] - 1 : history[(i * 7) % HISTORY]) : -1;
	const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}${since >= 0 ? `&since=${since}` : ''}`, { perMessageDeflate: false });
	const s = { ws, frames: 0, state: 'connecting', chatState: false, message: null, since, replayed: [] };
	const timer = setTimeout(() => fail('no welcome within 60 s'), 60000);
	const fail = (why) => {
		if (s.state !== 'connecting') return;
		s.state = 'failed';
		clearTimeout(timer);
		ws.terminate();
		reject(new Error(why));
	};
	ws.on('error', (e) => fail(e.code || e.message));
	ws.on('close', (code) => { if (s.state === 'welcomed') dropped++; else fail(`closed ${code}`); });
	ws.on('message', (data) => {
		const f = JSON.parse(data.toString());
		if (s.state === 'connecting') {
			if (f.type !== 'welcome') return fail(`not welcomed: ${String(data).slice(0, 80)}`);
			s.state = 'welcomed';
			clearTimeout(timer);
			return resolve(s);
		}
		lastFrameAt = performance.now();
		if (f.type === 'message') {
			if (f.message.body.startsWith('storm ')) s.message = performance.now();
			else s.replayed.push(f.message.seq);
			return;
		}
		s.frames++;
		byType[f.type] = (byType[f.type] || 0) + 1;
		if (f.type === 'chat_state') {
			s.chatState = true;
			if (f.unread === null) withoutUnread++; // the gateway left out its Postgres lookup (half of --query-queue out)
		}
	});
});

async function connectOne(i) {
	let backoff = 100;
	for (let n = 1; n <= ATTEMPTS; n++) {
		try { sockets.push(await attempt(i)); return; } catch (e) {
			failures[e.message] = (failures[e.message] || 0) + 1;
			if (n === ATTEMPTS) break;
			retries++;
			await sleep(backoff / 2 + Math.random() * backoff / 2);
			backoff = Math.min(backoff * 2, 2000);
		}
	}
	failed++;
}

// the chat's history, straight into the inbox (what the consumer would write)
let history = [];
if (HISTORY) {
	const db = new pg.Client({ connectionString: process.env.PGURL });
	await db.connect();
	const r = await db.query(`INSERT INTO workers.inbox (message_id, chat_id, body, created_at) SELECT gen_random_uuid(), $1, 'history ' || i, now() FROM generate_series(1, $2) i RETURNING seq`, [CHAT, HISTORY]);
	history = r.rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
	await db.end();
}
const metrics = async () => {
	const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
	const m = (name) => { const x = new RegExp(`^${name} (\\d+)$`, 'm').exec(text); return x ? Number(x[1]) : null; };
	return { catchups: m('chat_outboxd_gateway_catchups_total'), catchup_reads: m('chat_outboxd_gateway_catchup_reads_total'), chat_state_reads: m('chat_outboxd_gateway_chat_state_reads_total') };
};
const m0 = await metrics();
const rssBefore = status('VmRSS'), cpu0 = cpuMs();
const start = performance.now();
for (let i = 0; i < N; i += B)
	await Promise.all(Array.from({ length: Math.min(B, N - i) }, (_, k) => connectOne(i + k)));
const welcomedS = (performance.now() - start) / 1000;
const limit = performance.now() + 180000;
while (sockets.some((s) => !s.chatState) && performance.now() < limit) await sleep(50);
const chatStateS = (performance.now() - start) / 1000;
while (performance.now() - lastFrameAt < QUIET_MS && performance.now() < limit) await sleep(100);
const settledS = (performance.now() - lastFrameAt + (lastFrameAt - start)) / 1000 - QUIET_MS / 1000;
const cpuStorm = cpuMs() - cpu0;
const rssAfter = status('VmRSS');
const frames = sockets.map((s) => s.frames).sort((a, b) => a - b);
const m1 = await metrics();
const reads = Object.fromEntries(Object.keys(m0).map((k) => [k, m0[k] === null ? null : m1[k] - m0[k]]));
const replayed = sockets.map((s) => s.replayed.length).sort((a, b) => a - b);
const replayOk = sockets.every((s) => s.replayed.join() === history.filter((q) => q > s.since).join());
const pct = (a, p) => (a.length ? a[Math.min(a.length - 1, Math.floor(p * a.length))] : null);

// one message into the room: send -> the last socket that got it
const db = new pg.Client({ connectionString: process.env.PGURL });
await db.connect();
const body = `storm ${Date.now()}`;
const sent = performance.now();
await db.query('SELECT consumers.send_message($1, $2)', [CHAT, body]);
const until = performance.now() + 30000;
while (sockets.some((s) => s.message === null) && performance.now() < until) await sleep(10);
const arrivals = sockets.filter((s) => s.message !== null).map((s) => s.message - sent).sort((a, b) => a - b);
await db.end();

console.log(JSON.stringify({
	members: N, batch: B, welcomed: sockets.length, retries, failed, dropped_after_welcome: dropped, failures,
	welcomed_s: Number(welcomedS.toFixed(2)), all_chat_state_s: Number(chatStateS.toFixed(2)), settled_s: Number(settledS.toFixed(2)),
	frames_per_socket: { p50: pct(frames, 0.5), p99: pct(frames, 0.99), max: pct(frames, 1) },
	frames_by_type: byType,
	chat_state_without_unread: withoutUnread,
	...(HISTORY ? { history: HISTORY, replayed_per_socket: { p50: pct(replayed, 0.5), max: pct(replayed, 1) }, every_replay_exact: replayOk } : {}),
	gateway_reads: reads,
	daemon_cpu_s: Number((cpuStorm / 1000).toFixed(2)),
	rss_before_mb: Math.round(rssBefore / 1024), rss_after_mb: Math.round(rssAfter / 1024),
	rss_per_socket_kb: Number(((rssAfter - rssBefore) / Math.max(1, sockets.length)).toFixed(1)),
	rss_peak_mb: Math.round(status('VmHWM') / 1024),
	message: { received: arrivals.length, p50_ms: Number((pct(arrivals, 0.5) ?? NaN).toFixed(1)), last_ms: Number((pct(arrivals, 1) ?? NaN).toFixed(1)) },
}));
for (const s of sockets) { s.state = 'closed by us'; s.ws.terminate(); }
