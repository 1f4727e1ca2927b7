// bench/cluster/deliver.mjs <mode> - one round of bench/cluster/run.sh: messages through the extension's
// relay to bullmq Workers, on one Redis (mode "single") or a Redis Cluster (mode "cluster").
//
// Six Workers, one per partition queue (concurrency 1 each: a partition's jobs in order, as a consumer that
// keeps a chat's order runs them), on an ioredis connection to the mode's broker: a plain one to one Redis
// ("chat-messages-p<p>"), a Cluster one to the cluster ("{chat-messages-p<p>}"). Two phases:
//   throughput: BACKLOG messages sent in transactions of 1,000 over 100 chats as fast as Postgres takes them;
//               delivered msg/s = BACKLOG / (first send -> last job processed); also when the relay had
//               marked every row sent (relayed msg/s);
//   latency:    RATE messages/s over 12 chats for DURATION seconds, each its own transaction; latency = the Worker's
//               processing start - the send's COMMIT returning (both clocks this process's); p50, p90, p99, max.
// Prints one line of figures. Env: PGURL, BACKLOG (20000), RATE (200), DURATION (10), and SINGLE_PORT or
// CLUSTER_PORTS.
import { createRequire } from 'node:module';

// The npm peers live in tests/node_modules (one lockfile for every Node helper of the project).
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const { Worker } = require('bullmq');
const IORedis = require('ioredis');
const pg = require('pg');

const mode = process.argv[2];
const PARTITIONS = 6;
const BACKLOG = Number(process.env.BACKLOG || 20000), RATE = Number(process.env.RATE || 200);
const SECONDS = Number(process.env.DURATION || 10);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const connect = () => (mode === 'cluster'
	? new IORedis.Cluster(process.env.CLUSTER_PORTS.split(' ').map((port) => ({ host: '127.0.0.1', port: Number(port) })),
		{ redisOptions: { maxRetriesPerRequest: null } })
	: new IORedis({ port: Number(process.env.SINGLE_PORT), maxRetriesPerRequest: null }));
const queueOf = (p) => (mode === 'cluster' ? `{chat-messages-p${p}}` : `chat-messages-p${p}`);

let processed = 0, lastAt = 0;
const sentAt = new Map(); // body -> its COMMIT returned (latency phase)
const doneAt = new Map(); // body -> its job's processing started (latency phase)
const workers = [];
for (let p = 0; p < PARTITIONS; p++) {
	workers.push(new Worker(queueOf(p), async (job) => {
		const t = now();
		if (job.data.body.startsWith('bench ')) {
			processed++;
			lastAt = t;
		}
		if (job.data.body.startsWith('lat-')) doneAt.set(job.data.body, t);
	}, { connection: connect(), concurrency: 1 }));
}
await Promise.all(workers.map((w) => w.waitUntilReady()));
const pool = new pg.Pool({ connectionString: process.env.PGURL, max: 13 });
const waitFor = async (what, cond, ms) => {
	const until = Date.now() + ms;
	while (!(await cond())) {
		if (Date.now() > until) throw new Error(`timed out: ${what}`);
		await new Promise((r) => setTimeout(r, 20));
	}
};

// throughput
const t0 = now();
let relayedAt = 0;
const sending = (async () => {
	for (let i = 0; i < BACKLOG; i += 1000)
		await pool.query(`SELECT count(consumers.send_message(1 + g % 100, 'bench message body of a typical length, about eighty bytes ' || g))
			FROM generate_series(1, 1000) g`);
})();
const watching = (async () => {
	await sending;
	await waitFor('every row marked sent', async () => (await pool.query('SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL')).rows[0].n === 0, 600000);
	relayedAt = now();
})();
await sending;
const sentMs = now() - t0;
await waitFor(`${BACKLOG} processed`, async () => processed >= BACKLOG, 600000);
const deliveredMs = lastAt - t0;
await watching;
const relayedMs = relayedAt - t0; // polled every 20 ms and after the last send: an upper bound

// latency: RATE/s over 12 chats, each send its own transaction
const total = RATE * SECONDS;
const pause = 1000 / RATE;
const start = now();
const sends = [];
for (let i = 0; i < total; i++) {
	const due = start + i * pause;
	const wait = due - now();
	if (wait > 0) await new Promise((r) => setTimeout(r, wait));
	const body = `lat-${mode}-${i}`;
	sends.push(pool.query('SELECT consumers.send_message($1, $2)', [1 + (i % 12), body]).then(() => { sentAt.set(body, now()); }));
}
await Promise.all(sends);
await waitFor(`${total} latency samples`, async () => doneAt.size >= total, 60000).catch(() => {});
// a job may be processed before its COMMIT's answer reaches us (the relay is woken inside the commit): <= 0
const xs = [...sentAt].filter(([b]) => doneAt.has(b)).map(([b, s]) => doneAt.get(b) - s).sort((a, b) => a - b);
const q = (f) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(f * xs.length))] : NaN);
console.log(`${mode.padEnd(7)} delivered ${(BACKLOG / (deliveredMs / 1000)).toFixed(0).padStart(6)} msg/s`
	+ `  relayed ${(BACKLOG / (relayedMs / 1000)).toFixed(0).padStart(6)} msg/s  (sent in ${(sentMs / 1000).toFixed(1)} s)`
	+ `  latency ms p50 ${q(0.5).toFixed(1)} p90 ${q(0.9).toFixed(1)} p99 ${q(0.99).toFixed(1)} max ${xs.length ? xs[xs.length - 1].toFixed(1) : 'NaN'}`
	+ `  (${xs.length} of ${total} samples)`);
await Promise.all(workers.map((w) => w.close()));
await pool.end();
process.exit(0);
