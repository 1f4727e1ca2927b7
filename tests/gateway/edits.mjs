// tests/gateway/edits.mjs - edits and deletes as ordered events (docs/client-protocol.md, "Edits and
// deletes"), with real peers against two daemons (workers and consumers, one Postgres, one Redis,
// the extension's relay):
//  - a Consumers client's `edit` / `delete` (acks as `send`, its sub as sender) reach a Workers
//    client live as `message_edited` / `message_deleted`, on Socket.IO and /ws, after the message,
//    also on a second Workers gateway that consumes nothing (the bus);
//  - a deleted message's body is gone from every inbox row; history gives each message in its
//    current state, on both sides;
//  - catch-up after a reconnect (Socket.IO recovery, /ws ?since=) replays edits and deletes in
//    order with the messages;
//  - a real bullmq Worker sees message.edited / message.deleted as ordinary jobs, jobId the
//    event's id; a change relayed twice is applied once; an edit that comes before its message;
//  - bad input: another user's message, an unknown or deleted one, hostile ids, a token without a
//    sub, a 10-MB body, an edit racing its own message's delivery, a delete racing an edit.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { check, finish, waitFor, waitUntil } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected, recordingClient } from './sides_lib.mjs';

const CHAT = 42;
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')) });
// a second gateway of workers that consumes nothing: its clients are shown what the bus and the inbox say
const workersGateway = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('SPARE_PORT')),
	extra: ['--consume', 'off', '--identity', 'workers-gateway'] });

const client = (daemon, claims, chats = [CHAT]) => recordingClient(daemon, claims, chats);
const q = (sql, params) => postgres.query(sql, params);
// what a client was shown of message id, in order: [event name, body or null]
const story = (s, id) => s.events.filter((e) => ['message', 'message_edited', 'message_deleted'].includes(e.name) && e.data.id === id)
	.map((e) => [e.name, e.data.body ?? null]);
const seqsAscending = (s) => {
	const seqs = s.events.filter((e) => e.name.startsWith('message')).map((e) => e.data.seq);
	return seqs.every((v, i) => i === 0 || v > seqs[i - 1]);
};

try {
	await Promise.all([workers.start(), consumers.start(), workersGateway.start()]);
	const wanda = client(workers, { sub: 'wanda' });   // reads Consumers' messages
	const gwen = client(workersGateway, { sub: 'gwen' }); // reads them through the other gateway
	const carl = client(consumers, { sub: 'carl' });   // writes them
	const carlTab = client(consumers, { sub: 'carl' }); // carl's second tab: sees his changes as `sent`
	const ws = openWs(`ws://127.0.0.1:${workers.port}/ws?token=${token([CHAT], { sub: 'walt' })}`);
	await Promise.all([connected(wanda), connected(gwen), connected(carl), connected(carlTab), ws.opened]);
	await wanda.ask('join', { chat_id: CHAT });
	await ws.ask({ type: 'join', chat_id: CHAT });

	// ---- send, edit, delete through the gateway
	const sent = await carl.ask('send', { chat_id: CHAT, body: 'first text' });
	const id = sent.message.id;
	await waitUntil('wanda shown the message', () => story(wanda, id).length === 1, 30000);
	const edited = await carl.ask('edit', { message_id: id, body: 'second text' });
	check('edit: acked with the new body, edited_at and the sub as sender', edited.ok && edited.message.body === 'second text' &&
		typeof edited.message.edited_at === 'string' && edited.message.sender === 'carl' && edited.message.id === id, JSON.stringify(edited));
	await waitUntil('wanda shown the edit', () => story(wanda, id).length === 2, 30000);
	const ev = wanda.of('message_edited').find((e) => e.id === id);
	check('message_edited {id, chat_id, body, edited_at, sender, seq}, after the message',
		JSON.stringify(Object.keys(ev).sort()) === '["body","chat_id","edited_at","id","sender","seq"]' && ev.body === 'second text' &&
		ev.sender === 'carl' && ev.chat_id === CHAT && ev.seq > wanda.of('message').find((m) => m.id === id).seq, JSON.stringify(ev));
	const deleted = await carl.ask('delete', { message_id: id });
	check('delete: acked, body null, deleted_at', deleted.ok && deleted.message.body === null && typeof deleted.message.deleted_at === 'string',
		JSON.stringify(deleted));
	await waitUntil('wanda shown the delete', () => story(wanda, id).length === 3, 30000);
	const dv = wanda.of('message_deleted').find((e) => e.id === id);
	check('message_deleted {id, chat_id, deleted_at, seq}, no body',
		JSON.stringify(Object.keys(dv).sort()) === '["chat_id","deleted_at","id","seq"]', JSON.stringify(dv));
	check('Socket.IO: message, message_edited, message_deleted in order', JSON.stringify(story(wanda, id)) ===
		'[["message","first text"],["message_edited","second text"],["message_deleted",null]]', JSON.stringify(story(wanda, id)));
	await waitUntil('the /ws client shown all three', () => ws.frames.filter((f) => f.message?.id === id).length === 3, 10000);
	check('/ws: the same frames, type message, message_edited, message_deleted', JSON.stringify(ws.frames.filter((f) => f.message?.id === id)
		.map((f) => [f.type, f.message.body ?? null])) === JSON.stringify(story(wanda, id)));
	await waitUntil('the other gateway shown all three', () => story(gwen, id).length === 3, 30000);
	check('another gateway of the service (--consume off, fed by the bus): the same three events', JSON.stringify(story(gwen, id)) ===
		JSON.stringify(story(wanda, id)), JSON.stringify(story(gwen, id)));
	await waitUntil("carl's other tab shown the delete as `sent`", () => carlTab.of('sent').some((m) => m.id === id && m.deleted_at), 10000);
	check("carl's other tab: `sent` with the edit, then the delete", carlTab.of('sent').some((m) => m.id === id && m.edited_at && m.body === 'second text'));
	const bodies = await q('SELECT count(*)::int AS n FROM workers.inbox WHERE body IN ($1, $2)', ['first text', 'second text']);
	check("a deleted message's body is gone from the inbox, on every row of it", bodies[0].n === 0, JSON.stringify(bodies));
	const rows = await q(`SELECT kind, deleted_at IS NOT NULL AS deleted FROM workers.inbox WHERE message_id = $1 OR target = $1 ORDER BY seq`, [id]);
	check('the inbox keeps the message and its two events, all deleted', JSON.stringify(rows) ===
		'[{"kind":null,"deleted":true},{"kind":"edited","deleted":true},{"kind":"deleted","deleted":true}]', JSON.stringify(rows));

	// ---- history in the current state, both sides
	const kept = (await carl.ask('send', { chat_id: CHAT, body: 'to be edited' })).message.id;
	await carl.ask('edit', { message_id: kept, body: 'edited once' });
	await waitUntil('wanda shown the second edit', () => story(wanda, kept).length === 2, 30000);
	const hw = await wanda.ask('history', { chat_id: CHAT });
	const hc = await carl.ask('history', { chat_id: CHAT });
	for (const [side, h] of [['received (Workers)', hw], ['sent (Consumers)', hc]]) {
		const e = h.messages.find((m) => m.id === kept), d = h.messages.find((m) => m.id === id);
		check(`history, ${side}: the edited body with edited_at; the deleted one without body, with deleted_at; no event rows`,
			h.ok && e?.body === 'edited once' && e.edited_at && d?.body === null && d.deleted_at && h.messages.length === 2,
			JSON.stringify(h.messages));
	}

	// ---- catch-up replays edits and deletes in order with the messages
	const catchUp = (await carl.ask('send', { chat_id: CHAT, body: 'catch-up base' })).message.id;
	await waitUntil('wanda shown it', () => story(wanda, catchUp).length === 1, 30000);
	// the cursor /ws resumes from must be past the base message itself: wait until this client has it too (the
	// two clients are shown it at different moments; read earlier, the replay would hold the base row as well)
	await waitUntil('/ws shown it', () => ws.frames.some((f) => f.message?.id === catchUp), 30000);
	const since = Math.max(...ws.frames.filter((f) => f.message?.seq).map((f) => f.message.seq));
	wanda.io.engine.close(); // socket.io-client reconnects and recovers from its offset
	ws.close();
	await carl.ask('edit', { message_id: catchUp, body: 'edited while away' });
	const later = (await carl.ask('send', { chat_id: CHAT, body: 'sent while away' })).message.id;
	await carl.ask('delete', { message_id: catchUp });
	await waitUntil('workers.inbox has the three', async () => (await q('SELECT count(*)::int AS n FROM workers.inbox WHERE target = $1 OR message_id = $2', [catchUp, later]))[0].n === 3, 30000);
	await waitUntil('wanda recovered and shown the delete', () => story(wanda, catchUp).length === 3, 30000);
	// The edit is shown as an edit if it came before the delete, else (replayed after the delete
	// committed) in its state now: deleted, its body gone.
	const away = wanda.events.filter((e) => e.data?.id === catchUp || e.data?.id === later).map((e) => [e.name, e.data.body ?? null]).slice(1);
	check('Socket.IO recovery (recovered: true): the edit, the message sent after it and the delete, in order', wanda.recovered === true &&
		['[["message_edited","edited while away"],["message","sent while away"],["message_deleted",null]]',
			'[["message_deleted",null],["message","sent while away"],["message_deleted",null]]'].includes(JSON.stringify(away)), JSON.stringify(away));
	check('Socket.IO: every message event in seq order', seqsAscending(wanda));
	const back = openWs(`ws://127.0.0.1:${workers.port}/ws?token=${token([CHAT], { sub: 'walt' })}&since=${since}`);
	await back.opened;
	await back.ask({ type: 'join', chat_id: CHAT });
	await waitUntil('/ws catch-up', () => back.frames.filter((f) => f.message?.id === catchUp).length === 2, 10000)
		.catch((e) => { throw new Error(`${e.message}; frames of ${catchUp}: ${JSON.stringify(back.frames.filter((f) => f.message?.id === catchUp).map((f) => [f.type, f.message.seq]))}`); });
	const replay = back.frames.filter((f) => f.message && [catchUp, later].includes(f.message.id)).map((f) => f.type);
	// the edit's row now shows the delete (its body is gone): a replay after the delete shows it so
	check('/ws ?since=: the replay in order, each row in its state now', JSON.stringify(replay) ===
		'["message_deleted","message","message_deleted"]', JSON.stringify(replay));
	back.close();

	// ---- bad input
	const other = (await q(`SELECT id FROM consumers.send_message(${CHAT}, 'by olga', 'olga')`))[0].id;
	const before = (await q('SELECT count(*)::int AS n FROM consumers.outbox'))[0].n;
	const refused = {
		"another user's message": await carl.ask('edit', { message_id: other, body: 'x' }),
		'an unknown message': await carl.ask('delete', { message_id: '00000000-0000-4000-8000-00000000dead' }),
		'a deleted message': await carl.ask('edit', { message_id: id, body: 'x' }),
		'a hostile id (not a uuid)': await carl.ask('edit', { message_id: "x'; DROP TABLE consumers.messages; --", body: 'x' }),
		'a hostile id (10 KB)': await carl.ask('delete', { message_id: 'a'.repeat(10240) }),
		'a hostile id (NUL)': await carl.ask('delete', { message_id: `${other.slice(0, 35)}\u0000` }),
		'a number as id': await carl.ask('delete', { message_id: 42 }),
		'an empty body': await carl.ask('edit', { message_id: kept, body: '' }),
		'a NUL in the body': await carl.ask('edit', { message_id: kept, body: 'a\u0000b' }),
	};
	const want = { "another user's message": '42501', 'an unknown message': 'P0002', 'a deleted message': '55000', 'an empty body': '22023' };
	for (const [what, ack] of Object.entries(refused))
		check(`refused: ${what}${want[what] ? ` (${want[what]})` : ''}`, ack.ok === false && (!want[what] || ack.error.sqlstate === want[what]), JSON.stringify(ack));
	const anon = client(consumers, { sub: '' });
	await connected(anon);
	const anonAck = await anon.ask('delete', { message_id: other });
	check('a token without a sub may not edit or delete', anonAck.ok === false && anonAck.error.message === 'forbidden', JSON.stringify(anonAck));
	anon.close();
	// a 10-MB body: the gateway's --max-payload closes the connection, or send_message's rule refuses it
	const big = client(consumers, { sub: 'carl' });
	await connected(big);
	const bigAck = await big.ask('edit', { message_id: kept, body: 'x'.repeat(10 * 1024 * 1024) }).catch((e) => ({ closed: String(e) }));
	check('a 10-MB edit is refused (an error ack or a closed connection)', bigAck.ok === false || bigAck.closed !== undefined, JSON.stringify(bigAck).slice(0, 200));
	big.close();
	check('nothing written by any refused change', (await q('SELECT count(*)::int AS n FROM consumers.outbox'))[0].n === before);
	check('the refused changes left the message as it was', (await q('SELECT body FROM consumers.messages WHERE id = $1', [kept]))[0].body === 'edited once');

	// ---- races: an edit in its message's transaction (one relay batch, one inbox write); a delete
	// racing an edit from two sessions
	const raced = [];
	for (let i = 0; i < 20; i++) {
		await q(`DO $$ DECLARE m consumers.messages; BEGIN m := consumers.send_message(${CHAT}, 'race ${i}', 'carl');
			PERFORM consumers.edit_message(m.id, 'race ${i} edited', 'carl'); END $$`);
		raced.push((await q('SELECT id FROM consumers.messages WHERE body = $1', [`race ${i} edited`]))[0].id);
	}
	const contested = [];
	for (let i = 0; i < 20; i++) {
		const m = (await q(`SELECT id FROM consumers.send_message(${CHAT}, 'contested ${i}', 'carl')`))[0].id;
		const [e, d] = await Promise.allSettled([carl.ask('edit', { message_id: m, body: `contested ${i} edited` }), carl.ask('delete', { message_id: m })]);
		contested.push({ m, edit: e.value, del: d.value });
	}
	check('a delete racing an edit: the delete always succeeds; the edit succeeds before it or is refused (55000) after it',
		contested.every((c) => c.del.ok && (c.edit.ok || c.edit.error.sqlstate === '55000')), JSON.stringify(contested.find((c) => !c.del.ok || (!c.edit.ok && c.edit.error.sqlstate !== '55000'))));
	const ids = [...raced, ...contested.map((c) => c.m)];
	// Each raced message's final state is its sender's row: a contested one's edit, when it won, reaches
	// the inbox before its delete, so the wait is for the final state of every one of them, not for the
	// first change of each.
	const sameRows = () => q(`SELECT m.body = i.body AND (m.deleted_at IS NULL) = (i.deleted_at IS NULL) AS same FROM consumers.messages m JOIN workers.inbox i ON i.message_id = m.id WHERE m.id = ANY($1)`, [ids]);
	await waitFor("the raced messages' inbox rows reach their senders' rows", async () => { const r = await sameRows(); return r.length === 40 && r.every((x) => x.same); }, 60000);
	const final = await sameRows();
	check("each raced message's inbox row equals its sender's row (edited, or deleted)", final.length === 40 && final.every((r) => r.same), JSON.stringify(final.filter((r) => !r.same).length));
	const finalShown = (m, i) => (i < 20 ? ['message_edited', `race ${i} edited`] : ['message_deleted', null]);
	const lastIsFinal = () => ids.every((m, i) => JSON.stringify(story(wanda, m).at(-1)) === JSON.stringify(finalShown(m, i)));
	await waitFor('wanda shown the final state of every race', lastIsFinal, 60000);
	const lastShown = ids.map((m) => story(wanda, m).at(-1));
	check('the last thing wanda was shown of each raced message is its final state', lastIsFinal(),
		JSON.stringify(lastShown.filter((l, i) => JSON.stringify(l) !== JSON.stringify(finalShown(ids[i], i))).slice(0, 3)));
	check('Socket.IO: every message event in seq order, after the races', seqsAscending(wanda));

	// ---- edits and deletes are not messages: `shown` names messages only, unread counts messages only
	const shownIds = carl.of('shown').flatMap((e) => e.messages.map((m) => m.id));
	const notMessages = (await q('SELECT count(*)::int AS n FROM unnest($1::uuid[]) s(id) WHERE NOT EXISTS (SELECT FROM consumers.messages m WHERE m.id = s.id)', [shownIds]))[0].n;
	check('`shown` names messages, never an edit or delete', shownIds.length > 0 && notMessages === 0, `${notMessages} of ${shownIds.length}`);
	const nora = client(workers, { sub: 'nora' });
	await waitUntil('nora given chat_state', () => nora.of('chat_state').length > 0, 10000);
	const messagesIn42 = (await q('SELECT count(*)::int AS n FROM workers.inbox WHERE chat_id = $1 AND target IS NULL', [CHAT]))[0].n;
	check('chat_state: unread counts the messages, not their edits and deletes', nora.of('chat_state')[0].unread === messagesIn42,
		`${nora.of('chat_state')[0].unread} unread, ${messagesIn42} messages`);
	nora.close();

	// ---- a real bullmq Worker on a service of its own sees the events as ordinary jobs
	await q("SELECT chat_outbox.create_service('observed', 'observed-q')");
	const connection = new IORedis(env('REDIS_URL'), { maxRetriesPerRequest: null });
	const jobs = [];
	const worker = new Worker('observed-q', async (job) => { jobs.push({ name: job.name, id: job.id, data: job.data }); }, { connection, concurrency: 1 });
	const o = (await q("SELECT id FROM observed.send_message(1, 'observed', 'olga')"))[0].id;
	await q("SELECT observed.edit_message($1, 'observed edited', 'olga')", [o]);
	await q('SELECT observed.delete_message($1)', [o]);
	await waitUntil('the bullmq Worker processed the three jobs', () => jobs.length === 3, 30000);
	check('bullmq Worker: message.created, message.edited, message.deleted in order', JSON.stringify(jobs.map((j) => j.name)) ===
		'["message.created","message.edited","message.deleted"]', JSON.stringify(jobs));
	check("bullmq Worker: the changes' jobIds are their own ids, message_id names the message, versions 1 and 2",
		jobs[0].id === o && jobs.slice(1).every((j) => j.id === j.data.id && j.id !== o && j.data.message_id === o) &&
		jobs[1].data.version === 1 && jobs[2].data.version === 2, JSON.stringify(jobs));
	await worker.close();
	// an edit relayed twice: BullMQ refuses the second job while the first is kept, and the inbox
	// stores an event id once whenever a second job does come (here: added again by hand)
	const twice = (await carl.ask('edit', { message_id: kept, body: 'edited twice' })).message;
	await waitUntil('wanda shown it', () => story(wanda, kept).at(-1)?.[1] === 'edited twice', 30000);
	const payload = (await q(`SELECT payload FROM consumers.outbox WHERE event = 'message.edited' AND payload ->> 'body' = 'edited twice'`))[0].payload;
	const queue = new Queue('chat-messages', { connection });
	await queue.add('message.edited', payload, { jobId: payload.id });
	await queue.add('message.edited', { ...payload, body: 'edited twice' }, { jobId: `again-${payload.id.slice(6)}` }).catch(() => {});
	await waitUntil('the queue drained', async () => (await queue.getJobCounts('wait', 'active')).wait + (await queue.getJobCounts('wait', 'active')).active === 0, 30000);
	const n = (await q('SELECT count(*)::int AS n FROM workers.inbox WHERE message_id = $1', [payload.id]))[0].n;
	check('an edit relayed twice is stored once (the event id is the inbox key)', n === 1, `${n} rows; ${JSON.stringify(twice)}`);
	// an edit that reaches the receiver before its message (a message job retried after a failure comes
	// after the jobs behind it): the message is stored and shown in its edited state
	const early = { message: 'a0000000-0000-4000-8000-0000000000e1', edit: 'a0000000-0000-4000-8000-0000000000e2' };
	await queue.add('message.edited', { id: early.edit, message_id: early.message, chat_id: CHAT, body: 'the edit came first',
		sender: 'carl', version: 1, edited_at: new Date().toISOString() }, { jobId: early.edit });
	await waitUntil('the early edit stored', async () => (await q('SELECT count(*)::int AS n FROM workers.inbox WHERE message_id = $1', [early.edit]))[0].n === 1, 30000);
	await queue.add('message.created', { id: early.message, chat_id: CHAT, body: 'the original', sender: 'carl',
		created_at: new Date().toISOString() }, { jobId: early.message });
	await waitUntil('wanda shown the late message', () => story(wanda, early.message).some(([n]) => n === 'message'), 30000);
	const late = wanda.of('message').find((m) => m.id === early.message);
	check('an edit before its message: the message is shown and stored edited', late.body === 'the edit came first' && late.edited_at &&
		(await q('SELECT body FROM workers.inbox WHERE message_id = $1', [early.message]))[0].body === 'the edit came first', JSON.stringify(late));
	await queue.close();
	connection.disconnect();
	for (const s of [wanda, gwen, carl, carlTab]) s.close();
} catch (e) {
	check('no exception', false, e.stack);
} finally {
	await Promise.all([workers.stop(), consumers.stop(), workersGateway.stop()]);
}
finish();
