// tests/harness/bullmq_peer.mjs - the real bullmq side of the daemon tests (tests/harness/bullmq.sh runs it).
//   add <queue> <count> [chat_id] [opts-json]  Queue.addBulk (one Queue.add first), jobId = message uuid; prints ids in order;
//                                              each body `m<i>`, padded to PEER_BODY_BYTES bytes when that is set
//   add-raw <queue> <jobId> <data> [opts-json] Queue.add with arbitrary data text (JSON-parsed when it parses)
//   counts <queue>                             getJobCounts() as JSON
//   events <queue> <file>                      QueueEvents: appends "<event> <jobId>" lines until killed
//   worker <queue> <concurrency> <file>        a real Worker: appends each processed message id, returns {"by":"bullmq"}
//   job <queue> <jobId>                        the job's state, failedReason, returnvalue as JSON
// REDIS_URL comes from the environment (tests/harness/lib.sh); a redis-cluster:// URL (tests/harness/redis_cluster.sh's,
// seed nodes host:port,...) gives every command an ioredis Cluster connection instead, and <queue> must then be named
// with its hash tag ("{t-mixed}", the name docs/deploy.md gives a queue on a cluster; add-raw is single-Redis only).
import { Queue, QueueEvents, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const seeds = REDIS_URL.match(/^redis-cluster:\/\/([^/?]+)$/)?.[1].split(',').map((hostPort) => {
	const [host, port] = hostPort.split(':');
	return { host, port: Number(port) };
});
const url = seeds ? null : new URL(REDIS_URL);
const connection = seeds ? new IORedis.Cluster(seeds, { redisOptions: { maxRetriesPerRequest: null } })
	: { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
const [cmd, queueName, ...rest] = process.argv.slice(2);

async function add() {
	const count = Number(rest[0]);
	const chat = rest[1] ? Number(rest[1]) : 7;
	const extra = rest[2] ? JSON.parse(rest[2]) : {};
	const q = new Queue(queueName, { connection });
	const ids = [];
	const pad = Number(process.env.PEER_BODY_BYTES || 0);
	const body = (i) => `m${i}`.padEnd(pad, 'x');
	const mk = (i) => {
		const id = randomUUID();
		ids.push(id);
		return { name: 'message.created', data: { id, chat_id: chat, body: body(i), created_at: new Date().toISOString() },
			opts: { jobId: id, ...extra } };
	};
	const first = mk(0);
	await q.add(first.name, first.data, first.opts);
	for (let i = 1; i < count; i += 500) {
		const chunk = [];
		for (let k = i; k < Math.min(count, i + 500); k++) chunk.push(mk(k));
		await q.addBulk(chunk);
	}
	console.log(ids.join('\n'));
	await q.close();
}

async function addRaw() {
	const [jobId, data, optsJson] = rest;
	const extra = optsJson ? JSON.parse(optsJson) : {};
	const q = new Queue(queueName, { connection });
	let parsed;
	try { parsed = JSON.parse(data); } catch { parsed = undefined; }
	if (parsed === undefined) {
		// Queue.add always writes JSON; a producer that does not is simulated by a raw HSET afterwards.
		await q.add('message.created', {}, { jobId });
		const { default: IORedis } = await import('ioredis');
		const r = new IORedis(connection);
		await r.hset(`bull:${queueName}:${jobId}`, 'data', data);
		r.disconnect();
	} else {
		await q.add('message.created', parsed, { jobId, ...extra });
	}
	await q.close();
}

async function counts() {
	const q = new Queue(queueName, { connection });
	console.log(JSON.stringify(await q.getJobCounts()));
	await q.close();
}

async function events() {
	const file = rest[0];
	const qe = new QueueEvents(queueName, { connection });
	for (const ev of ['completed', 'failed', 'stalled', 'active', 'waiting', 'delayed', 'retries-exhausted']) {
		qe.on(ev, (args) => appendFileSync(file, `${ev} ${args.jobId}\n`));
	}
	qe.on('error', (e) => appendFileSync(file, `error ${e.message}\n`));
	await qe.waitUntilReady();
	appendFileSync(file, 'ready -\n');
}

async function worker() {
	const [concurrency, file] = rest;
	const w = new Worker(queueName, async (job) => {
		appendFileSync(file, `${job.data.id}\n`);
		return { by: 'bullmq' };
	}, { connection, concurrency: Number(concurrency) });
	await w.waitUntilReady();
	appendFileSync(file, 'ready\n');
	process.on('SIGTERM', async () => { await w.close(); process.exit(0); });
}

async function job() {
	const q = new Queue(queueName, { connection });
	const j = await q.getJob(rest[0]);
	console.log(JSON.stringify(j ? { state: await j.getState(), failedReason: j.failedReason, returnvalue: j.returnvalue,
		attemptsMade: j.attemptsMade } : null));
	await q.close();
}

const table = { add, 'add-raw': addRaw, counts, events, worker, job };
if (!table[cmd] || (seeds && cmd === 'add-raw')) {
	console.error(`unknown command ${cmd}${seeds ? ' on a cluster' : ''}`);
	process.exit(2);
}
await table[cmd]();
// a shared Cluster connection outlives the Queue that used it: the one-shot commands end it
if (seeds && cmd !== 'worker' && cmd !== 'events') connection.disconnect();
