// tests/consumer/inbox_two_writers.mjs - two writers on one inbox, and a backend that commits late.
//
// Another session plays the second writer: it takes the inbox's advisory lock, inserts rows (some
// with ids the daemon is about to write, one only it writes) and commits while the daemon waits for
// the lock. Then the daemon is SIGKILLed while its inbox write waits for the lock, started again,
// and the lock released, so the killed daemon's backend may go on and commit after the restart.
// Every client must be shown every row of its chat once, in seq order, whoever wrote it.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import pg from 'pg';
import { env, postgres, receivingDaemon, watcher } from '../faults/procs.mjs';
import { check, finish, waitUntil as waitFor } from '../harness/check.mjs';

const QUEUE = 't-two-writers';
const CHAT = 7;
const LOCK = "pg_advisory_xact_lock(hashtext('chat_outbox.inbox:workers'))";
const url = new URL(env('REDIS_URL'));
const queue = new Queue(QUEUE, { connection: { host: url.hostname, port: Number(url.port) } });
const daemon = receivingDaemon({ service: 'workers', queue: QUEUE, port: Number(env('DAEMON_PORT')) });

let n = 0;
function add(ids) {
	return queue.addBulk(ids.map((id) => ({ name: 'message.created', opts: { jobId: id },
		data: { id, chat_id: CHAT, body: `m${n++}`, created_at: new Date().toISOString() } })));
}
const uuids = (k) => Array.from({ length: k }, () => randomUUID());
const lockWaiters = async () =>
	(await postgres.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0].n;
const inboxIds = async () =>
	(await postgres.query('SELECT message_id::text AS id FROM workers.inbox WHERE chat_id = $1 ORDER BY seq', [CHAT]))
		.map((r) => r.id);

// checkClients: each client was shown exactly the chat's inbox rows, in seq order, each once.
async function checkClients(what, clients) {
	const want = await inboxIds();
	const shown = (c) => c.seen.map((m) => m.id);
	const complete = () => clients.every((c) => want.every((id) => shown(c).includes(id)));
	await waitFor(`${what}: every client shown all ${want.length} rows`, complete, 15000).catch(() => {});
	for (const c of clients) {
		const got = shown(c);
		const missing = want.filter((id) => !got.includes(id)).length;
		const seqs = c.seen.map((m) => m.seq);
		check(`${what}: ${c.name} shown every row once, in seq order`,
			got.length === want.length && got.every((id, i) => id === want[i]),
			`want ${want.length} rows, shown ${got.length}, missing ${missing}, seqs [${seqs.join(',')}]`);
	}
}

await daemon.start();
const clients = [
	watcher({ port: daemon.port, chats: [CHAT], name: 'default' }),
	watcher({ port: daemon.port, chats: [CHAT], name: 'websocket' }),
];
clients[1].socket.io.opts.transports = ['websocket'];
for (const c of clients) {
	c.connects = 0;
	c.socket.on('connect', () => c.connects++);
}
await waitFor('clients connected', () => clients.every((c) => c.socket.connected));
const holder = new pg.Client({ connectionString: env('PGURL') });
await holder.connect();

// 1. The other writer holds the lock with rows that overlap the daemon's next batch, and one of its own.
const a = uuids(6);
const own = randomUUID();
await holder.query('BEGIN');
await holder.query(`SELECT ${LOCK}`);
await holder.query("INSERT INTO workers.inbox (message_id, chat_id, body) VALUES ($1, $3, 'a0'), ($2, $3, 'a1'), ($4, $3, 'own')",
	[a[0], a[1], CHAT, own]);
await add(a);
await waitFor('the daemon waiting for the inbox lock', async () => (await lockWaiters()) === 1);
await holder.query('COMMIT');
await waitFor('batch 1 in the inbox', async () => (await inboxIds()).length === 7);
await add(uuids(1)); // a live push after it
await waitFor('8 rows in the inbox', async () => (await inboxIds()).length === 8);
await checkClients('two writers', clients);

// 2. The daemon is killed while its inbox write waits for the lock, and started again; the killed
//    daemon's backend gets the lock first once it is released.
await holder.query('BEGIN');
await holder.query(`SELECT ${LOCK}`);
await add(uuids(5));
await waitFor('the daemon waiting for the inbox lock', async () => (await lockWaiters()) === 1);
await daemon.stop('SIGKILL');
await daemon.start();
await waitFor('clients connected to the restarted daemon', () => clients.every((c) => c.connects >= 2 && c.socket.connected));
await waitFor('both backends waiting for the inbox lock', async () => (await lockWaiters()) === 2);
await holder.query('COMMIT');
await waitFor('batch 2 in the inbox', async () => (await inboxIds()).length === 13);
await add(uuids(2));
await waitFor('15 rows in the inbox', async () => (await inboxIds()).length === 15);
await checkClients('late commit after a restart', clients);

const counts = await queue.getJobCounts();
check('every job completed, none failed', counts.completed === 14 && counts.failed === 0 && counts.active === 0,
	JSON.stringify(counts));

for (const c of clients) c.socket.close();
await holder.end();
await daemon.stop();
await queue.close();
finish();
