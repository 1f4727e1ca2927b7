// tests/gateway/members.mjs - --authz membership (docs/gateway.md, Membership) with real clients
// against two gateways of the workers service (one consumes, one --consume off), one Postgres (the
// extension's relay carries consumers.send_message to them), one Redis:
//  - a token with only sub and exp connects to the chats chat_outbox.members gives its sub; a chats
//    claim narrows them; no sub, and hostile subs (empty, NUL, 10 KB), are refused;
//  - remove_member: within 1 s every socket of the user on both gateways (Socket.IO and /ws) gets
//    `removed` {chat_id}, then nothing more of the chat, and its join, send, history are `forbidden`,
//    while another member goes on receiving; a reconnect with catch-up replays nothing of it;
//  - add_member: the user joins at once, no new token;
//  - remove_member racing a send by that member: acked and shown to the others, or refused.
import { check, finish, waitUntil } from '../harness/check.mjs';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import jwt from 'jsonwebtoken';
import { io } from 'socket.io-client';
import { SECRET } from '../harness/jwt.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected } from './sides_lib.mjs';

const CHAT = 77, OTHER = 78;
const authz = ['--authz', 'membership'];
const gwA = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')), extra: authz });
const gwB = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('SPARE_PORT')),
	extra: [...authz, '--consume', 'off', '--identity', 'workers-gateway'] });
const q = (sql, params) => postgres.query(sql, params);
// a token of exactly these claims (an undefined one is left out: no chats claim, no sub) for an hour
const token = (claims) => jwt.sign({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims }, SECRET, { algorithm: 'HS256' });
// a Socket.IO client recording its events (as sides_lib.mjs's recordingClient, with any claims)
const client = (daemon, claims, opts = {}) => {
	const s = io(`http://127.0.0.1:${daemon.port}`, { auth: { token: token(claims) }, transports: ['websocket'], reconnectionDelay: 100, ...opts });
	s.events = [];
	s.onAny((name, data) => s.events.push({ name, data }));
	s.of = (name) => s.events.filter((e) => e.name === name).map((e) => e.data);
	s.ask = (event, arg) => s.timeout(10000).emitWithAck(event, arg);
	return s;
};
const member = (daemon, sub) => client(daemon, { sub });
const bodiesOf = (s, chat) => s.events.filter((e) => e.name === 'message' && e.data.chat_id === chat).map((e) => e.data.body);
const wsBodies = (ws, chat) => ws.frames.filter((f) => f.type === 'message' && f.message?.chat_id === chat).map((f) => f.message.body);
const send = (body, chat = CHAT) => q('SELECT consumers.send_message($1, $2)', [chat, body]);
// a connect refusal: resolves with the connect_error's message and reason
const refusal = (daemon, claims) => new Promise((resolve) => {
	const s = client(daemon, claims, { reconnection: false });
	s.on('connect_error', (e) => { s.close(); resolve(`${e.message}: ${e.data?.reason}`); });
	s.on('connect', () => { s.close(); resolve('connected'); });
});

try {
	await q("SELECT chat_outbox.add_member($1, 'mia'), chat_outbox.add_member($1, 'max'), chat_outbox.add_member($2, 'mia')", [CHAT, OTHER]);
	await Promise.all([gwA.start(), gwB.start()]);

	// ---- tokens
	check('no sub: refused', (await refusal(gwA, { sub: undefined })) === 'unauthorized: sub missing');
	check('an empty sub: refused', (await refusal(gwA, { sub: '' })) === 'unauthorized: bad sub');
	check('a sub with a NUL: refused', (await refusal(gwA, { sub: 'a\u0000b' })) === 'unauthorized: bad sub');
	const long = await refusal(gwA, { sub: 'x'.repeat(10240) });
	check('a 10-KB sub: refused', long.startsWith('unauthorized: '), long); // by the token's size limit first
	const narrowed = client(gwA, { sub: 'mia', chats: [OTHER] });
	await connected(narrowed);
	check('a chats claim narrows the membership', (await narrowed.ask('join', { chat_id: CHAT })).error === 'forbidden');
	narrowed.close();
	const stranger = member(gwA, 'sam');
	await connected(stranger);
	check('a user of no chat connects, and may join none', (await stranger.ask('join', { chat_id: CHAT })).error === 'forbidden');

	// ---- mia on both gateways and both protocols, max as the one who stays
	const mia = member(gwA, 'mia');
	const max = member(gwA, 'max');
	const miaWs = openWs(`ws://127.0.0.1:${gwB.port}/ws?token=${token({ sub: 'mia' })}`);
	await Promise.all([connected(mia), connected(max), miaWs.opened]);
	await waitUntil('the /ws welcome', () => miaWs.frames.some((f) => f.type === 'welcome'), 10000);
	check('/ws welcome: the chats of its membership', JSON.stringify(miaWs.frames.find((f) => f.type === 'welcome').chats) ===
		JSON.stringify([CHAT, OTHER]));
	await send('before');
	await waitUntil('all shown the message before the removal', () => bodiesOf(mia, CHAT).includes('before') &&
		bodiesOf(max, CHAT).includes('before') && wsBodies(miaWs, CHAT).includes('before'), 30000);

	// ---- removal: live on both gateways within 1 s
	await q("SELECT chat_outbox.remove_member($1, 'mia')", [CHAT]);
	await waitUntil('removed on both gateways within 1 s', () => mia.of('removed').length === 1 &&
		miaWs.frames.some((f) => f.type === 'removed'), 1000, 10);
	check('Socket.IO: removed {chat_id}', JSON.stringify(mia.of('removed')) === JSON.stringify([{ chat_id: CHAT }]));
	check('/ws: {"type":"removed","chat_id"}', JSON.stringify(miaWs.frames.filter((f) => f.type === 'removed')) ===
		JSON.stringify([{ chat_id: CHAT, type: 'removed' }]));
	const seenBefore = mia.events.length;
	await send('after');
	await send('other chat', OTHER);
	await waitUntil('max shown the message after the removal', () => bodiesOf(max, CHAT).includes('after'), 30000);
	await waitUntil('mia shown her other chat', () => bodiesOf(mia, OTHER).includes('other chat') &&
		wsBodies(miaWs, OTHER).includes('other chat'), 30000);
	check('nothing of the chat reached mia after `removed` (Socket.IO)', !mia.events.slice(seenBefore).some((e) => e.data?.chat_id === CHAT));
	check('nothing of the chat reached mia after `removed` (/ws)', !wsBodies(miaWs, CHAT).includes('after'));
	check('join: forbidden', (await mia.ask('join', { chat_id: CHAT })).error === 'forbidden');
	const sendAck = await mia.ask('send', { chat_id: CHAT, body: 'x' });
	check('send: forbidden', JSON.stringify(sendAck).includes('forbidden'), JSON.stringify(sendAck));
	const historyAck = await mia.ask('history', { chat_id: CHAT });
	check('history: forbidden', JSON.stringify(historyAck).includes('forbidden'), JSON.stringify(historyAck));
	const wsJoin = await miaWs.ask({ type: 'join', chat_id: CHAT });
	check('/ws join: refused', wsJoin.type === 'error', JSON.stringify(wsJoin));

	// a reconnect with catch-up from before the removal replays nothing of the chat
	const since = miaWs.frames.find((f) => f.type === 'welcome').seq;
	const again = openWs(`ws://127.0.0.1:${gwB.port}/ws?since=${since}&token=${token({ sub: 'mia' })}`);
	await again.opened;
	await waitUntil('the catch-up shows her other chat', () => wsBodies(again, OTHER).includes('other chat'), 10000);
	check('catch-up after the removal: nothing of the chat', wsBodies(again, CHAT).length === 0, JSON.stringify(wsBodies(again, CHAT)));
	again.close();

	// ---- added again: joins at once, no new token
	await q("SELECT chat_outbox.add_member($1, 'mia')", [CHAT]);
	await waitUntil('mia may join again within 1 s', async () => (await mia.ask('join', { chat_id: CHAT })).ok === true, 1000, 10);
	await send('welcome back');
	await waitUntil('mia shown the chat again', () => bodiesOf(mia, CHAT).includes('welcome back'), 30000);

	// ---- remove_member racing a send by that member: committed and shown, or refused
	const [ack] = await Promise.all([mia.ask('send', { chat_id: CHAT, body: 'racing' }),
		q("SELECT chat_outbox.remove_member($1, 'mia')", [CHAT])]);
	// (mia's send goes to the other service, consumers: what it shows is its outbox row)
	const stored = await q("SELECT count(*)::int AS n FROM workers.messages WHERE body = 'racing' AND sender = 'mia'");
	if (ack.ok)
		check('the racing send: acked and committed, on its way to the others', stored[0].n === 1, JSON.stringify(stored));
	else
		check('the racing send: refused, nothing written', JSON.stringify(ack).includes('forbidden') && stored[0].n === 0, JSON.stringify(ack));
	await waitUntil('removed again', () => mia.of('removed').length === 2, 1000, 10);

	for (const s of [mia, max, stranger]) s.close();
	miaWs.close();
} catch (e) {
	check('members', false, e.stack);
} finally {
	await Promise.all([gwA.stop(), gwB.stop()]);
}
finish();
