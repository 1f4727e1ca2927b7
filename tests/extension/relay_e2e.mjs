// tests/extension/relay_e2e.mjs - the relay against a real bullmq Worker and QueueEvents.
//
// 1,000 messages over 10 chats from 10 concurrent senders; every one must be processed exactly
// once by jobId, each chat in outbox (send) order, with job data equal to the stored message.
// Then re-sent rows must become BullMQ duplicates, not second jobs, and the reverse direction
// (workers -> chat-replies) must work too. Env: PGURL, REDIS_URL.
import { Worker, QueueEvents, Queue } from 'bullmq';
import IORedis from 'ioredis';
import pg from 'pg';
import { check, finish, sleep, waitUntil } from '../harness/check.mjs';

const SENDERS = 10, PER_SENDER = 100, CHATS = 10, TOTAL = SENDERS * PER_SENDER;
const connection = () => new IORedis(process.env.REDIS_URL, { maxRetriesPerRequest: null });

const processed = []; // {id, name, data} in processing order
const worker = new Worker('chat-messages', async (job) => {
	processed.push({ id: job.id, name: job.name, data: job.data, opts: job.opts });
	return { ok: true };
}, { connection: connection(), concurrency: 1 });
const events = new QueueEvents('chat-messages', { connection: connection() });
let added = 0, duplicated = 0;
events.on('added', () => added++);
events.on('duplicated', () => duplicated++);
await worker.waitUntilReady();
await events.waitUntilReady();

// 10 senders, each its own connection, all at once; sender s writes to every chat in turn
const pool = new pg.Pool({ connectionString: process.env.PGURL, max: SENDERS });
await Promise.all(Array.from({ length: SENDERS }, async (_, s) => {
	const c = await pool.connect();
	try {
		for (let n = 0; n < PER_SENDER; n++)
			// even senders name an author (send_message's sender), odd ones make the two-argument call
			await (s % 2 === 0
				? c.query('SELECT id FROM consumers.send_message($1, $2, $3)', [(s + n) % CHATS + 1, `s${s}-n${n} "quoted" ✓`, `user-${s} ✓`])
				: c.query('SELECT id FROM consumers.send_message($1, $2)', [(s + n) % CHATS + 1, `s${s}-n${n} "quoted" ✓`]));
	} finally { c.release(); }
}));

await waitUntil('1000 jobs processed', async () => processed.length >= TOTAL, 60000);
const { rows } = await pool.query(`
	SELECT m.id::text, m.chat_id, m.body, to_jsonb(m.created_at) #>> '{}' AS created_at, m.sender, o.id AS outbox_id, o.sent_at
	FROM consumers.messages m JOIN consumers.outbox o ON (o.payload ->> 'id')::uuid = m.id ORDER BY o.id`);
check(`postgres stored ${rows.length} of ${TOTAL} messages`, rows.length === TOTAL);
check('every outbox row is marked sent', rows.every((r) => r.sent_at !== null));
const ids = new Set(processed.map((p) => p.id));
check(`worker processed ${processed.length} jobs, ${ids.size} distinct`, processed.length === TOTAL && ids.size === TOTAL);
const byId = new Map(rows.map((r) => [r.id, r]));
check('every processed job is a stored message', processed.every((p) => byId.has(p.id)));
check('job name is message.created', processed.every((p) => p.name === 'message.created'));
const dataMismatch = processed.filter((p) => {
	const m = byId.get(p.id);
	return !m || p.data.id !== m.id || p.data.chat_id !== Number(m.chat_id) || p.data.body !== m.body ||
		p.data.created_at !== m.created_at || p.data.sender !== m.sender || Object.keys(p.data).length !== 5;
});
check(`job data equals the stored message, sender included (${dataMismatch.length} mismatches)`, dataMismatch.length === 0);
check('job data carries a sender, null when sent without one',
	processed.some((p) => p.data.sender === 'user-0 ✓') && processed.some((p) => p.data.sender === null));
check('opts carry jobId and attempts 0', processed.every((p) => p.opts.jobId === p.id && p.opts.attempts === 0));
// Send order: a sender waits for each commit before its next send, so within a chat each sender's
// messages must be processed in the order it sent them. (Between two senders racing on one chat
// there is no send order to keep: a lower outbox id may commit later.)
let outOfOrder = 0;
for (let chat = 1; chat <= CHATS; chat++) {
	const got = processed.filter((p) => p.data.chat_id === chat).map((p) => p.data.body.match(/^s(\d+)-n(\d+)/));
	for (let s = 0; s < SENDERS; s++) {
		const ns = got.filter((m) => Number(m[1]) === s).map((m) => Number(m[2]));
		if (ns.some((n, i) => i > 0 && n < ns[i - 1])) outOfOrder++;
	}
}
check(`every chat processed in each sender's send order (${outOfOrder} chat/sender pairs out of order)`, outOfOrder === 0);
// and one sender per chat is strict FIFO end to end: the workers' chat 7 below
await waitUntil('added events', async () => added >= TOTAL, 10000);
check(`QueueEvents saw ${added} added events`, added === TOTAL);

// the job hash has the six fields Queue.add writes
const redis = connection();
const h = await redis.hgetall(`bull:chat-messages:${rows[0].id}`);
check(`job hash fields: ${Object.keys(h).sort().join(',')}`,
	['name', 'data', 'opts', 'timestamp', 'delay', 'priority'].every((f) => f in h) && h.delay === '0' && h.priority === '0');
// byte for byte what Queue.add(name, data, {jobId}) stores
check(`job opts ${h.opts}, name ${h.name}`,
	h.opts === `{"jobId":"${rows[0].id}","attempts":0}` && h.name === 'message.created');
const counts = await new Queue('chat-messages', { connection: connection() }).getJobCounts();
check(`job counts ${JSON.stringify(counts)}`, counts.completed === TOTAL && counts.waiting === 0 && counts.active === 0);

// re-sending rows (a relay that died before COMMIT) adds nothing: duplicated events only
await pool.query('UPDATE consumers.outbox SET sent_at = NULL WHERE id IN (SELECT id FROM consumers.outbox ORDER BY id LIMIT 5)');
await waitUntil('re-sent rows marked again', async () =>
	(await pool.query('SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL')).rows[0].n === 0, 60000);
await waitUntil('duplicated events', async () => duplicated >= 5, 10000);
await sleep(300); // a wrongly re-queued job would be picked up by now
check(`re-send: ${duplicated} duplicated events, still ${processed.length} processed`, duplicated === 5 && processed.length === TOTAL);

// the reverse direction travels on chat-replies
const replies = [];
const replyWorker = new Worker('chat-replies', async (job) => { replies.push(job.data); }, { connection: connection() });
for (let n = 0; n < 10; n++) await pool.query('SELECT workers.send_message($1, $2)', [7, `reply ${n}`]);
await waitUntil('10 replies', async () => replies.length >= 10, 20000);
check('workers -> chat-replies in order', replies.map((r) => r.body).join() === Array.from({ length: 10 }, (_, n) => `reply ${n}`).join());

await Promise.all([worker.close(), replyWorker.close(), events.close()]);
await pool.end();
redis.disconnect();
finish();
