// tests/gateway/members.mjs - --authz membership (docs/client-protocol.md, Membership) with real clients
// against two gateways of the workers service (one consumes, one --consume off), one Postgres (the
// extension's relay carries consumers.send_message to them), one Redis:
//  - a token with only sub and exp connects to the chats chat_outbox.members gives its sub; a chats
//    claim narrows them; no sub, and hostile subs (empty, NUL, 10 KB), are refused;
//  - remove_member: within 1 s every socket of the user on both gateways (Socket.IO and /ws) gets
//    `removed` {chat_id}, then nothing more of the chat, and its join, send, history are `forbidden`,
//    while another member goes on receiving; a reconnect with catch-up replays nothing of it;
//  - add_member: the user joins at once, no new token;
//  - the membership cache (/metrics) holds an entry per user with a socket on the gateway: 200 users
//    of two tabs are 200 entries, a refused connect leaves none, and once all left entries, indexed
//    users and bytes are back where they were;
//  - remove_member racing a send and an edit by that member: each acked and shown to the others, or
//    refused with nothing written; after it her edits and deletes of her own messages there are
//    refused 42501 (the change's statement checks the membership, as a send's does).
import { check, finish, waitUntil } from '../harness/check.mjs';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected } from './sides_lib.mjs';
import { client, refusal, token } from './members_lib.mjs';

const CHAT = 77, OTHER = 78;
const authz = ['--authz', 'membership'];
const gwA = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')), extra: authz });
const gwB = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('SPARE_PORT')),
	extra: [...authz, '--consume', 'off', '--identity', 'workers-gateway'] });
const q = (sql, params) => postgres.query(sql, params);
const member = (daemon, sub) => client(daemon, { sub });
const bodiesOf = (s, chat) => s.events.filter((e) => e.name === 'message' && e.data.chat_id === chat).map((e) => e.data.body);
const wsBodies = (ws, chat) => ws.frames.filter((f) => f.type === 'message' && f.message?.chat_id === chat).map((f) => f.message.body);
const send = (body, chat = CHAT) => q('SELECT consumers.send_message($1, $2)', [chat, body]);

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

	// ---- remove_member racing a send and an edit by that member: each committed and shown, or refused
	const mine = await mia.ask('send', { chat_id: CHAT, body: 'mine' });
	const gone = await mia.ask('send', { chat_id: CHAT, body: 'to delete' });
	check('mia sends to the chat again', mine.ok === true && gone.ok === true, JSON.stringify([mine, gone]));
	const [ack, editAck] = await Promise.all([mia.ask('send', { chat_id: CHAT, body: 'racing' }),
		mia.ask('edit', { message_id: mine.message.id, body: 'mine, edited' }),
		q("SELECT chat_outbox.remove_member($1, 'mia')", [CHAT])]);
	// (mia's send goes to the other service, consumers: what it shows is its outbox row)
	const stored = await q("SELECT count(*)::int AS n FROM workers.messages WHERE body = 'racing' AND sender = 'mia'");
	if (ack.ok)
		check('the racing send: acked and committed, on its way to the others', stored[0].n === 1, JSON.stringify(stored));
	else
		check('the racing send: refused, nothing written', JSON.stringify(ack).includes('forbidden') && stored[0].n === 0, JSON.stringify(ack));
	const [edited] = await q('SELECT body, version FROM workers.messages WHERE id = $1', [mine.message.id]);
	if (editAck.ok)
		check('the racing edit: acked and committed', edited.body === 'mine, edited' && edited.version === 1, JSON.stringify(edited));
	else
		check('the racing edit: refused as not a member, nothing written', editAck.error?.sqlstate === '42501' &&
			edited.body === 'mine' && edited.version === 0, JSON.stringify([editAck, edited]));
	await waitUntil('removed again', () => mia.of('removed').length === 2, 1000, 10);
	// after the removal her own messages of the chat are no longer hers to change
	const deleteAck = await mia.ask('delete', { message_id: gone.message.id });
	const wsEdit = await miaWs.ask({ type: 'edit', message_id: gone.message.id, body: 'x' });
	const [kept] = await q('SELECT body, version FROM workers.messages WHERE id = $1', [gone.message.id]);
	check('delete after the removal: refused 42501, nothing written', deleteAck.ok === false &&
		deleteAck.error.sqlstate === '42501' && kept.body === 'to delete' && kept.version === 0, JSON.stringify([deleteAck, kept]));
	check('/ws edit after the removal: refused 42501', wsEdit.type === 'error' && wsEdit.error?.sqlstate === '42501', JSON.stringify(wsEdit));
	const unknown = await mia.ask('delete', { message_id: '00000000-0000-4000-8000-000000000000' });
	check('an unknown message is still unknown (P0002)', unknown.error?.sqlstate === 'P0002', JSON.stringify(unknown));

	for (const s of [mia, max, stranger]) s.close();
	miaWs.close();

	// ---- the cache follows who is connected: an entry per user with a socket here, none once gone
	const cache = async (d) => ({ users: await d.metric('chat_outboxd_gateway_membership_cache_users'),
		bytes: await d.metric('chat_outboxd_gateway_membership_cache_bytes'), indexed: await d.metric('chat_outboxd_gateway_users') });
	await waitUntil('the first users left the cache', async () => (await cache(gwA)).users === 0, 10000);
	const base = await cache(gwA);
	const USERS = 200;
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT $1, 'crowd-' || g FROM generate_series(1, $2) g", [CHAT, USERS]);
	const crowd = [];
	for (let i = 1; i <= USERS; i++) crowd.push(member(gwA, `crowd-${i}`), member(gwA, `crowd-${i}`)); // two tabs each
	await Promise.all(crowd.map((s) => connected(s)));
	// connects the membership refuses after their read: no entry stays for them
	const refused = await Promise.all(Array.from({ length: 20 }, (_, i) => refusal(gwA, { sub: `outsider-${i}` }, [CHAT])));
	check('an outsider asking for the chat is refused by the membership', refused.every((r) => r === 'forbidden: chat 77 is not a chat of this user'), refused[0]);
	const asking = client(gwA, { sub: 'crowd-1' }, { auth: { token: token({ sub: 'crowd-1' }), chats: [CHAT] } });
	await connected(asking);
	check('a member asking for her chat (auth.chats, no chats claim) connects', asking.connected);
	asking.close();
	const full = await cache(gwA);
	check(`${USERS} users of two sockets each: ${USERS} entries, ${USERS} users indexed`, full.users === USERS && full.indexed === USERS,
		JSON.stringify(full));
	console.log(`membership cache: ${base.users} entries / ${base.bytes} bytes before, ${full.users} / ${full.bytes} with ${USERS} users ` +
		`(${Math.round((full.bytes - base.bytes) / USERS)} bytes per user of 1 chat); ` +
		`${await gwA.metric('chat_outboxd_gateway_membership_reads_total')} reads of chat_outbox.members so far`);
	crowd.filter((_, i) => i % 2 === 0).forEach((s) => s.close()); // one tab of each user
	await waitUntil('one tab of each user closed', async () => (await gwA.metric('chat_outboxd_clients_connected')) === USERS, 10000);
	check('a user with a tab left keeps the entry', (await cache(gwA)).users === USERS);
	crowd.forEach((s) => s.close());
	await waitUntil('every entry gone with the last tabs', async () => (await cache(gwA)).users === base.users, 10000);
	const after = await cache(gwA);
	check('entries, indexed users and bytes back to the baseline', JSON.stringify(after) === JSON.stringify(base),
		JSON.stringify({ base, after }));
} catch (e) {
	check('members', false, e.stack);
} finally {
	await Promise.all([gwA.stop(), gwB.stop()]);
}
finish();
