// tests/gateway/client_lib.mjs - the JavaScript client library (clients/js/chat_client.mjs) against
// real daemons (consumers and workers, one Postgres, one Redis, the extension's relay):
//  - written while the sender's daemon is down: queued (kept in the store), sent once it is up,
//    each acked once, stored once, shown once on the other side, in the order written;
//  - through tests/gateway/cut_proxy.mjs, every send's first attempt cut after its commit and
//    before its ack: the library sends again by itself, each stored once, acked as the stored one;
//  - the sender's daemon killed (SIGKILL) while sends are in flight, then started again: nothing lost,
//    nothing twice;
//  - a request refused for good (a chat outside the token) leaves the queue as `refused`, the next
//    ones go on; edits and deletes through the queue, each applied once;
//  - resume: a reader closed (a page closed) while 450 messages arrive, then opened again with the
//    same store: every one shown, once, in order, none before its last seq (no cap on catch-up).
import { io } from 'socket.io-client';
import { ChatClient, MemoryStore } from '../../clients/js/chat_client.mjs';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { check, finish, waitFor, waitUntil } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';
import { CutProxy } from './cut_proxy.mjs';

const CHAT = 91;
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')) });
const q = (sql, params) => postgres.query(sql, params);
const client = (port, sub, store = new MemoryStore(), chats = [CHAT]) =>
	new ChatClient({ url: `http://127.0.0.1:${port}`, token: token(chats, { sub }), io, store, ackTimeoutMs: 2000, minBackoffMs: 100, maxBackoffMs: 1000 });
// record: every message a client shows and every ack and refusal it reports
const record = (c) => {
	c.seen = [];
	c.acks = [];
	c.refusals = [];
	c.on('message', (m) => c.seen.push(m)).on('acked', (r, m, repeat) => c.acks.push({ r, m, repeat }))
		.on('refused', (r, e) => c.refusals.push({ r, e }));
	return c;
};
const storedOnce = async (bodies) => {
	const rows = await q('SELECT body, count(*)::int AS n FROM consumers.messages WHERE chat_id = $1 AND body = ANY ($2) GROUP BY body', [CHAT, bodies]);
	return rows.length === bodies.length && rows.every((r) => r.n === 1);
};

try {
	await workers.start();
	const wendy = record(client(workers.port, 'wendy')).connect(); // the other side
	await waitUntil('wendy connected', () => wendy.socket.connected, 10000);

	// ---- written while the daemon is down
	const carl = record(client(consumers.port, 'carl')).connect();
	const offline = ['offline 1', 'offline 2', 'offline 3'];
	for (const b of offline) carl.send(CHAT, b);
	check('written while the daemon is down: queued', carl.pending().length === 3 && carl.store.load().queue.length === 3);
	await consumers.start();
	await waitUntil('the offline messages acked', () => carl.pending().length === 0, 30000);
	check('each acked once, in order, with its client_msg_id', carl.acks.map((a) => a.m.body).join() === offline.join() &&
		carl.acks.every((a) => a.m.client_msg_id === a.r.client_msg_id), JSON.stringify(carl.acks.map((a) => a.m)));
	check('stored once', await storedOnce(offline));

	// ---- cut after the commit, before the ack
	const committed = (key) => waitUntil('the cut send committed', async () =>
		(await q('SELECT 1 FROM consumers.client_msg_ids WHERE client_msg_id = $1', [key])).length === 1, 30000, 10);
	const proxy = new CutProxy({ target: consumers.port, committed });
	await proxy.start();
	const cathy = record(client(proxy.port, 'cathy')).connect();
	await waitUntil('cathy connected', () => cathy.socket.connected, 10000);
	const cut = [];
	for (let i = 0; i < 6; i++) {
		const r = cathy.send(CHAT, `cut ${i}`);
		cut.push(r.body);
		await proxy.arm(r.client_msg_id, i % 2 ? 'ack' : 'commit', i % 3 ? 'drop' : 'stall');
		await waitUntil(`cut ${i} acked`, () => cathy.pending().length === 0, 30000);
	}
	check('every cut send acked as a repeat of the stored message', cathy.acks.length === 6 && cathy.acks.every((a) => a.repeat),
		JSON.stringify(cathy.acks.map((a) => [a.m.body, a.repeat])));
	check('every cut send stored once', await storedOnce(cut));
	cathy.close();
	await proxy.stop();

	// ---- the daemon killed with sends in flight
	const killed = [];
	for (let i = 0; i < 20; i++) killed.push(carl.send(CHAT, `killed ${i}`).body);
	await waitUntil('some acked', () => carl.acks.length >= 5, 10000, 1);
	await consumers.stop('SIGKILL');
	await consumers.start();
	await waitUntil('every one acked after the restart', () => carl.pending().length === 0, 30000);
	check('the daemon killed mid-queue: every message stored once', await storedOnce(killed));
	check('acked in the order written', carl.acks.slice(3).map((a) => a.m.body).join() === killed.join(),
		carl.acks.slice(3).map((a) => a.m.body).join());

	// ---- a refusal, then edits and deletes through the queue
	carl.send(CHAT + 1, 'not my chat');
	const after = carl.send(CHAT, 'after the refusal');
	await waitUntil('the queue empty', () => carl.pending().length === 0, 20000);
	check('a chat outside the token: refused, not retried, the next one sent', carl.refusals.length === 1 &&
		carl.refusals[0].e.message === 'forbidden' && carl.acks.at(-1).r.key === after.key, JSON.stringify(carl.refusals));
	const id = carl.acks.at(-1).m.id;
	carl.edit(id, 'after the refusal, edited');
	carl.remove(carl.acks[0].m.id);
	await waitUntil('edit and delete acked', () => carl.pending().length === 0, 20000);
	const changes = await q(`SELECT count(*) FILTER (WHERE event = 'message.edited')::int AS edits, count(*) FILTER (WHERE event = 'message.deleted')::int AS deletes
		FROM consumers.outbox WHERE chat_id = $1`, [CHAT]);
	check('one edit and one delete event', changes[0].edits === 1 && changes[0].deletes === 1, JSON.stringify(changes));

	// ---- the other side: everything once, in order
	const all = [...offline, ...cut, ...killed, 'after the refusal'];
	await waitFor('wendy shown everything', () => all.every((b) => wendy.seen.some((m) => m.body === b)), 30000);
	const wendyBodies = wendy.seen.filter((m) => all.includes(m.body)).map((m) => m.body);
	check(`the other side shown each of ${all.length} messages once`, wendyBodies.length === all.length &&
		new Set(wendyBodies).size === all.length, JSON.stringify(wendyBodies));

	// ---- resume: closed while 450 arrive, opened again with the same store
	const store = wendy.store;
	const lastSeq = wendy.lastSeq;
	wendy.close();
	await q(`SELECT consumers.send_message($1, 'while away ' || g) FROM generate_series(1, 450) g`, [CHAT]);
	await waitUntil('the 450 in the inbox', async () => (await q(`SELECT count(*)::int AS n FROM workers.inbox WHERE chat_id = $1 AND body LIKE 'while away %'`, [CHAT]))[0].n === 450, 60000);
	const again = record(client(workers.port, 'wendy', store)).connect();
	await waitFor('the reopened reader shown the 450', () => again.seen.filter((m) => m.body.startsWith('while away ')).length >= 450, 60000);
	const away = again.seen.filter((m) => m.body?.startsWith('while away '));
	check('resumed after a close: all 450 shown once, in order, nothing from before', away.length === 450 &&
		away.every((m, i) => m.body === `while away ${i + 1}` && m.seq > lastSeq) && again.seen.length === 450,
	`${away.length} shown, ${again.seen.length} in all`);
	again.close();
	carl.close();
} catch (e) {
	check('client_lib ran to the end', false, e.stack);
} finally {
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
finish();
