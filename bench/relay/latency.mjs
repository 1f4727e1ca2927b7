// bench/relay/latency.mjs <count> <pace_ms> - commit -> job visible in Redis, per message.
//
// Each send is BEGIN; send_message(); COMMIT on one connection. A second Redis connection follows
// the queue's events stream (XREAD BLOCK) and stamps when each job's `added` entry arrives.
// Prints two latencies per message: from sending COMMIT, and from the COMMIT ack arriving at the
// client (the relay is woken inside the commit, so the job can be visible before the ack: <= 0).
// Env: PGURL, REDIS_URL.
import { createRequire } from 'node:module';

// The npm peers live in tests/node_modules (one lockfile for every Node helper of the project).
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const IORedis = require('ioredis');
const pg = require('pg');

const [count, pace] = [Number(process.argv[2] || 1000), Number(process.argv[3] || 5)];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const seen = new Map();
const redis = new IORedis(process.env.REDIS_URL);
let stop = false;
// Start after the stream's current last entry, not at '$': '$' re-evaluated after a timed-out
// XREAD would skip entries written between two calls.
const tail = await redis.xrevrange('bull:chat-messages:events', '+', '-', 'COUNT', 1);
const reader = (async () => {
	let last = tail.length ? tail[0][0] : '0-0';
	while (!stop) {
		const res = await redis.xread('BLOCK', 200, 'STREAMS', 'bull:chat-messages:events', last);
		const t = now();
		if (!res) continue;
		for (const [id, fields] of res[0][1]) {
			last = id;
			if (fields[1] === 'added') seen.set(fields[3], t);
		}
	}
})();

const client = new pg.Client({ connectionString: process.env.PGURL });
await client.connect();
// Warm-up, not measured: the reader's first XREAD, the relay's Redis connection and cached plans.
for (let i = 0; i < 20; i++) await client.query('SELECT consumers.send_message(1, $1)', [`warm-up ${i}`]);
await new Promise((r) => setTimeout(r, 500));
const sends = [];
for (let i = 0; i < count; i++) {
	await client.query('BEGIN');
	const { rows } = await client.query('SELECT id::text FROM consumers.send_message($1, $2)', [i % 10 + 1, `bench ${i}`]);
	const tCommit = now();
	await client.query('COMMIT');
	sends.push({ id: rows[0].id, tCommit, tAck: now() });
	await new Promise((r) => setTimeout(r, pace));
}
const deadline = Date.now() + 10000;
while (sends.some((s) => !seen.has(s.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
stop = true;
await reader;
await client.end();
redis.disconnect();

const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fromCommit = sends.filter((s) => seen.has(s.id)).map((s) => seen.get(s.id) - s.tCommit).sort((a, b) => a - b);
const fromAck = sends.filter((s) => seen.has(s.id)).map((s) => seen.get(s.id) - s.tAck).sort((a, b) => a - b);
const f = (x) => x.toFixed(3);
if (process.env.LATENCY_WORST) {
	const t0 = sends[0].tCommit;
	const worst = sends.filter((s) => seen.has(s.id)).map((s) => ({ at: (s.tCommit - t0).toFixed(0), ms: (seen.get(s.id) - s.tAck).toFixed(1) }))
		.sort((a, b) => b.ms - a.ms).slice(0, 8);
	console.error(`worst (ms after first send: ack->visible): ${worst.map((w) => `${w.at}:${w.ms}`).join(' ')}; first send at ${new Date(Date.now() - (now() - t0)).toISOString()}`);
}
console.log(JSON.stringify({
	sent: count, seen: fromCommit.length,
	commit_sent_to_visible_ms: { p50: f(pct(fromCommit, 50)), p95: f(pct(fromCommit, 95)), p99: f(pct(fromCommit, 99)), max: f(fromCommit.at(-1)) },
	commit_ack_to_visible_ms: { p50: f(pct(fromAck, 50)), p95: f(pct(fromAck, 95)), p99: f(pct(fromAck, 99)) },
}));
