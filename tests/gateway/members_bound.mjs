// tests/gateway/members_bound.mjs - --authz membership with a user in more chats than
// --max-member-chats (docs/client-protocol.md, Membership: a user in many chats), real clients against one
// workers gateway (--max-member-chats 5), Postgres with the extension's relay, Redis:
//  - big, member of chats 101-108: her Socket.IO and /ws sockets hold the first five (101-105), get
//    `chats_cut` {max_member_chats:5}, and are shown nothing of 106-108; asking for 107 at connect is
//    refused with a reason that says to join it; small (101-103) is not cut and sees all of hers;
//  - join of 107 with five held: too_many_chats (both protocols); leave 101 then join 107: joined
//    (checked in the database) and shown, 101 no longer hers to send to, joining it back too_many_chats;
//    a chat she is not a member of past the list: forbidden;
//  - remove_member of 107 (held past the list): `removed` at once; add_member of 100 (before the
//    list): joinable, 105 pushed out of the list is no removal; 108 joined past the list; a bulk
//    statement (a `*` notification, every user read again) that removes 103 of hers: `removed` for
//    103 only, none for 105 or 108, and 108 still shown;
//  - a user in 5,000 chats costs the cache what a user of five does;
//  - a user whose list becomes cut by an add_member is told `chats_cut` live.
import { check, finish, waitUntil } from '../harness/check.mjs';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected } from './sides_lib.mjs';
import { client as memberClient, refusal, token } from './members_lib.mjs';

const client = (sub, opts = {}) => memberClient(gw, { sub }, opts);

const BOUND = 5;
const gw = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')),
	extra: ['--authz', 'membership', '--max-member-chats', String(BOUND)] });
const q = (sql, params) => postgres.query(sql, params);
const chatsShown = (s) => [...new Set(s.of('message').map((m) => m.chat_id))].sort((a, b) => a - b);
const wsChatsShown = (ws) => [...new Set(ws.frames.filter((f) => f.type === 'message').map((f) => f.message.chat_id))].sort((a, b) => a - b);
const bodies = (s) => s.of('message').map((m) => m.body);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const send = (chat, body) => q('SELECT consumers.send_message($1, $2)', [chat, body]);

try {
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT c, 'big' FROM generate_series(101, 108) c");
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT c, 'small' FROM generate_series(101, 103) c");
	await gw.start();

	// ---- connect: the first five, told so; another user is not cut
	const big = client('big');
	const small = client('small');
	const bigWs = openWs(`ws://127.0.0.1:${gw.port}/ws?token=${token({ sub: 'big' })}`);
	await waitUntil('both Socket.IO clients and the /ws one connected', () => big.connected && small.connected &&
		bigWs.readyState === bigWs.OPEN, 10000);
	await waitUntil('big told her chats were cut (both protocols)', () => big.of('chats_cut').length === 1 &&
		bigWs.frames.some((f) => f.type === 'chats_cut'), 10000);
	check('Socket.IO: chats_cut {max_member_chats}', same(big.of('chats_cut'), [{ max_member_chats: BOUND }]), JSON.stringify(big.of('chats_cut')));
	check('/ws: welcome with the first five chats', same(bigWs.frames.find((f) => f.type === 'welcome').chats, range(101, 105)));
	check('/ws: {"type":"chats_cut","max_member_chats":5}', same(bigWs.frames.filter((f) => f.type === 'chats_cut'),
		[{ max_member_chats: BOUND, type: 'chats_cut' }]), JSON.stringify(bigWs.frames.filter((f) => f.type === 'chats_cut')));
	await waitUntil('chat_state of each chat joined', () => big.of('chat_state').length === BOUND, 10000);
	check('Socket.IO: joined the first five', same(big.of('chat_state').map((c) => c.chat_id).sort(), range(101, 105)));

	// messages to all eight chats, then a marker in 105: shown in seq order, so once big has the marker
	// she had whatever of 106-108 was to reach her
	for (const chat of range(101, 108)) await send(chat, `m${chat}`);
	await send(105, 'marker');
	await waitUntil('big shown the marker (both)', () => bodies(big).includes('marker') &&
		bigWs.frames.some((f) => f.type === 'message' && f.message.body === 'marker'), 30000);
	await waitUntil('small shown her three chats', () => chatsShown(small).length === 3, 30000);
	check('big (Socket.IO) shown 101-105 only', same(chatsShown(big), range(101, 105)), JSON.stringify(chatsShown(big)));
	check('big (/ws) shown 101-105 only', same(wsChatsShown(bigWs), range(101, 105)), JSON.stringify(wsChatsShown(bigWs)));
	check('small: not cut, her three chats', small.of('chats_cut').length === 0 && same(chatsShown(small), range(101, 103)));

	// ---- asking for a chat past the list at connect: refused, saying what to do
	const asked = await refusal(gw, { sub: 'big' }, [107]);
	check('auth.chats past the list: refused, join it once connected', asked ===
		'forbidden: chat 107 is not among the first 5 chats of this user (--max-member-chats): join it once connected', asked);

	// ---- one by one past the list, within the bound
	check('join 107 with five held: too_many_chats', (await big.ask('join', { chat_id: 107 })).error === 'too_many_chats');
	const wsFull = await bigWs.ask({ type: 'join', chat_id: 107 });
	check('/ws join 107 with five held: too_many_chats', wsFull.type === 'error' && wsFull.error?.message === 'too_many_chats', JSON.stringify(wsFull));
	check('leave 101', (await big.ask('leave', { chat_id: 101 })).ok === true);
	check('then join 107: joined', (await big.ask('join', { chat_id: 107 })).ok === true);
	check('/ws: leave 101, join 107', (await bigWs.ask({ type: 'leave', chat_id: 101 })).ok === true &&
		(await bigWs.ask({ type: 'join', chat_id: 107 })).ok === true);
	const sent101 = await big.ask('send', { chat_id: 101, body: 'x' });
	check('101 given back: send there forbidden', JSON.stringify(sent101).includes('forbidden'), JSON.stringify(sent101));
	check('joining 101 back with five held: too_many_chats', (await big.ask('join', { chat_id: 101 })).error === 'too_many_chats');
	await send(107, 'in 107');
	await waitUntil('big shown 107 (both)', () => bodies(big).includes('in 107') &&
		bigWs.frames.some((f) => f.type === 'message' && f.message.body === 'in 107'), 30000);
	check('leave 102', (await big.ask('leave', { chat_id: 102 })).ok === true);
	check('a chat she is not in, past the list: forbidden', (await big.ask('join', { chat_id: 999 })).error === 'forbidden');

	// ---- live changes
	await q("SELECT chat_outbox.remove_member(107, 'big')");
	await waitUntil('removed 107 (held past the list) within 1 s', () => big.of('removed').length === 1 &&
		bigWs.frames.some((f) => f.type === 'removed'), 1000, 10);
	check('removed {chat_id:107}', same(big.of('removed'), [{ chat_id: 107 }]), JSON.stringify(big.of('removed')));
	await q("SELECT chat_outbox.add_member(100, 'big')");
	await waitUntil('100 (before the list) joinable within 1 s', async () => (await big.ask('join', { chat_id: 100 })).ok === true, 1000, 10);
	check('join 108 past the list in the place 107 left', (await big.ask('join', { chat_id: 108 })).ok === true);
	// a statement of more than 64 rows: one `*`, every user of the gateway read again; it takes 103 from big
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT 200, 'bulk-' || g FROM generate_series(1, 70) g");
	await q("DELETE FROM chat_outbox.members WHERE user_id LIKE 'bulk-%' OR (user_id = 'big' AND chat_id = 103)");
	await waitUntil('removed 103 after the bulk statement', () => big.of('removed').length === 2, 5000, 10);
	await send(108, 'after the bulk');
	await waitUntil('big shown a message of 108 after it', () => bodies(big).includes('after the bulk'), 30000);
	check('removed 107 then 103 only (105 pushed out of the list, 108 held past it: no removal)',
		same(big.of('removed'), [{ chat_id: 107 }, { chat_id: 103 }]), JSON.stringify(big.of('removed')));
	check('/ws: the same removals', same(bigWs.frames.filter((f) => f.type === 'removed').map((f) => f.chat_id), [107, 103]),
		JSON.stringify(bigWs.frames.filter((f) => f.type === 'removed')));
	check('small: no removal, no cut', small.of('removed').length === 0 && small.of('chats_cut').length === 0);

	// ---- the cache: a user in 5,000 chats costs what a user of five does
	for (const s of [big, small]) s.close();
	bigWs.close();
	const cache = async () => ({ users: await gw.metric('chat_outboxd_gateway_membership_cache_users'),
		bytes: await gw.metric('chat_outboxd_gateway_membership_cache_bytes') });
	await waitUntil('the cache emptied', async () => (await cache()).users === 0, 10000);
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT c, 'huge' FROM generate_series(1, 5000) c");
	await q("INSERT INTO chat_outbox.members (chat_id, user_id) SELECT c, 'five' FROM generate_series(1, 5) c");
	const five = client('five');
	await connected(five);
	const withFive = await cache();
	const huge = client('huge');
	await connected(huge);
	const withHuge = await cache();
	await waitUntil('huge told her chats were cut', () => huge.of('chats_cut').length === 1, 10000);
	const perUser = { five: withFive.bytes, huge: withHuge.bytes - withFive.bytes };
	console.log(`membership cache bytes: a user of ${BOUND} chats ${perUser.five} (with the table), a user of 5,000 chats ${perUser.huge} more`);
	check('a user in 5,000 chats: one entry of the bound (under 8 bytes a chat of hers)', withHuge.users === 2 &&
		perUser.huge < 5000 * 8 / 10, JSON.stringify({ withFive, withHuge }));
	// ---- chats_cut told live: five holds her five chats, not cut; a sixth added makes her list cut
	check('five: not cut at connect', five.of('chats_cut').length === 0);
	await q("SELECT chat_outbox.add_member(6, 'five')");
	await waitUntil('five told live that her chats are cut', () => five.of('chats_cut').length === 1, 10000);
	check('live chats_cut {max_member_chats}', same(five.of('chats_cut'), [{ max_member_chats: BOUND }]), JSON.stringify(five.of('chats_cut')));
	five.close();
	huge.close();
} catch (e) {
	check('members_bound', false, e.stack);
} finally {
	await gw.stop();
}
finish();
