// tests/gateway/conversation.mjs - docs/client-protocol.md "Conversations", with real socket.io-client and ws
// peers against two daemons (workers and consumers, one Postgres, one Redis):
//  - history pages received and sent messages: bounded in rows and bytes, no gap and no repeat to the
//    end, each with its sender, only for chats in the token, clear errors for bad arguments;
//  - read receipts: stored, never backwards, broadcast to the other side with the message id, given
//    in chat_state on join (with the unread count), and durable across a daemon restart;
//  - presence across the two services: both users, two tabs count once, a closed page drops out,
//    a client of a killed daemon drops out when its member expires;
//  - typing crosses to the other side and not to the typist; `shown` and `sent` reach the sender's side;
//  - bad input: unknown chat, malformed arguments, floods of typing and read get error acks, on both
//    protocols, and a flooding client does not delay another client's typing or history.
import { io } from 'socket.io-client';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { receivingDaemon, postgres, env, sleep } from '../faults/procs.mjs';
import { check, finish, waitFor, waitUntil } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected, recordingClient } from './sides_lib.mjs';

const CHAT = 42, OTHER = 43, EMPTY = 44;
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')) });

const client = (daemon, claims, chats = [CHAT, OTHER, EMPTY]) => recordingClient(daemon, claims, chats);
// A /ws client: frames by type, and requests answered by ref.
const wsClient = (daemon, claims, chats = [CHAT]) => openWs(`ws://127.0.0.1:${daemon.port}/ws?token=${token(chats, claims)}`);

try {
	await Promise.all([workers.start(), consumers.start()]);
	// History: 300 messages each way in chat 42 (Consumers -> workers.inbox; Workers -> workers.messages),
	// and twenty of 60 KB (1.2 MB), and a few in chat 43.
	// with their authors (the large ones without: sender null)
	await postgres.query(`SELECT consumers.send_message(${CHAT}, 'c' || g, 'carl') FROM generate_series(1, 300) g`);
	await postgres.query(`SELECT workers.send_message(${CHAT}, 'w' || g, 'wanda') FROM generate_series(1, 300) g`);
	await postgres.query(`SELECT workers.send_message(${CHAT}, repeat('B', 60000)) FROM generate_series(1, 20)`);
	await postgres.query(`SELECT consumers.send_message(${OTHER}, 'other' || g) FROM generate_series(1, 3) g`);
	await waitUntil('workers.inbox to hold the 303 received messages',
		async () => (await postgres.query('SELECT count(*)::int AS n FROM workers.inbox')).at(0).n === 303, 30000);

	const wanda = client(workers, { sub: 'wanda', name: 'Wanda' });
	const carl = client(consumers, { sub: 'carl', name: 'Carl' });
	await Promise.all([connected(wanda), connected(carl)]);

	// ---- history
	let page = await wanda.ask('history', { chat_id: CHAT, limit: 200 });
	check('history: a first page of at most limit messages, newest first, more to come', page.ok && page.messages.length <= 200 &&
		page.messages.every((m) => m.dir === 'out') && page.more === true,
		JSON.stringify({ ok: page.ok, n: page.messages?.length, more: page.more, error: page.error }));
	const bytes = page.messages.reduce((n, m) => n + m.body.length, 0);
	check('history: a page stops at the message that crosses --catchup-page-bytes (1 MiB)', bytes >= 1048576 && bytes <= 1048576 + 60000, `${bytes} bytes`);
	const seen = new Map();
	const wrongSender = [];
	let pages = 0;
	for (;;) {
		pages++;
		for (const m of page.messages) {
			seen.set(m.id, (seen.get(m.id) || 0) + 1);
			const want = m.body.startsWith('B') ? null : m.dir === 'in' ? 'carl' : 'wanda';
			if (m.sender !== want) wrongSender.push(m);
		}
		if (!page.more) break;
		page = await wanda.ask('history', { chat_id: CHAT, limit: 37, before_seq: page.next.before_seq, before_sent: page.next.before_sent });
		if (!page.ok) break;
	}
	check('history: each message with its sender, received and sent, null when sent without one', wrongSender.length === 0,
		JSON.stringify(wrongSender.slice(0, 2)));
	const counts = [...seen.values()];
	check('history: paged to the end, every message of the chat once (300 received + 320 sent), no other chat',
		seen.size === 620 && counts.every((n) => n === 1), `${seen.size} distinct in ${pages} pages, max count ${Math.max(...counts)}`);
	const bad = await Promise.all([
		wanda.ask('history', { chat_id: 999 }), wanda.ask('history', { chat_id: CHAT, limit: 500 }),
		wanda.ask('history', { chat_id: CHAT, before_sent: 'nonsense' }), wanda.ask('history', 'x'),
		wanda.ask('history', { chat_id: CHAT, before_sent: '2026-13-01T00:00:00+00:00|0b6d1c2e-0000-4000-8000-00000000abcd' })]);
	check('history: a chat outside the token is forbidden; a bad limit, cursor or argument is bad_request',
		bad[0].error?.code === 'forbidden' && bad.slice(1).every((r) => r.ok === false && r.error.code === 'bad_request'),
		JSON.stringify(bad.map((r) => r.error)));

	// ---- chat_state on join
	await waitUntil('chat_state for chat 42 on both sides', () => wanda.of('chat_state').some((s) => s.chat_id === CHAT) &&
		carl.of('chat_state').some((s) => s.chat_id === CHAT), 10000, 10);
	const wState = wanda.of('chat_state').find((s) => s.chat_id === CHAT);
	check('chat_state: unread counts the inbox rows (capped at 1000), no cursor yet', wState.unread === 300 && wState.my_read === null,
		JSON.stringify({ unread: wState.unread, my_read: wState.my_read }));
	check('chat_state: unread per chat (43: 3, 44: 0)', wanda.of('chat_state').find((s) => s.chat_id === OTHER)?.unread === 3 &&
		wanda.of('chat_state').find((s) => s.chat_id === EMPTY)?.unread === 0);

	// ---- presence
	const names = (users) => (users || []).map((u) => `${u.service}:${u.sub}:${u.name}`).join(',');
	await waitUntil('both users in presence', async () => names((await carl.ask('presence', { chat_id: CHAT })).users) ===
		'consumers:carl:Carl,workers:wanda:Wanda', 10000);
	check('presence: both users, across the two services', true);
	const wandaEvents = () => carl.of('presence').filter((p) => p.user.sub === 'wanda').length;
	const wandaBefore = wandaEvents();
	const wanda2 = client(workers, { sub: 'wanda', name: 'Wanda' });
	await connected(wanda2);
	await waitUntil('the second tab\'s chat_state', () => wanda2.of('chat_state').some((s) => s.chat_id === CHAT), 10000, 10);
	check('presence: a second tab of the same user counts once (no event, the same list)', wandaEvents() === wandaBefore &&
		names((await carl.ask('presence', { chat_id: CHAT })).users) === 'consumers:carl:Carl,workers:wanda:Wanda');
	wanda2.close();
	await sleep(300);
	check('presence: closing one of two tabs keeps the user', wandaEvents() === wandaBefore &&
		names((await carl.ask('presence', { chat_id: CHAT })).users) === 'consumers:carl:Carl,workers:wanda:Wanda');
	const anon = client(consumers, { sub: 'dora', name: 'Dora' });
	await waitUntil('Dora announced to Wanda', () => wanda.of('presence').some((p) => p.user.sub === 'dora' && p.present === true), 10000, 10);
	anon.close();
	await waitUntil('Dora gone at Wanda', () => wanda.of('presence').some((p) => p.user.sub === 'dora' && p.present === false), 10000, 10);
	check('presence: a user who joins and leaves is announced to the other side, with present true then false', true);

	// ---- typing
	check('typing: acked', (await wanda.ask('typing', { chat_id: CHAT })).ok === true);
	await waitUntil('typing at Carl', () => carl.of('typing').some((t) => t.user.sub === 'wanda' && t.typing === true && t.chat_id === CHAT), 10000, 10);
	check('typing: reaches the other side with the user and the chat', true);
	await sleep(200);
	check('typing: not echoed to the typist', !wanda.of('typing').length);
	const anonymous = client(workers, { sub: '' });
	await connected(anonymous);
	check('typing and read: from a token without sub, no_identity', (await anonymous.ask('typing', { chat_id: CHAT })).error?.code === 'no_identity' &&
		(await anonymous.ask('read', { chat_id: CHAT, seq: 1 })).error?.code === 'no_identity');
	check('history: a token without sub still reads it', (await anonymous.ask('history', { chat_id: OTHER })).messages?.length === 3);
	anonymous.close();

	// ---- sent and shown
	const sent = await wanda.ask('send', { chat_id: CHAT, body: 'live from Wanda' });
	await waitUntil('sent event at the sender', () => wanda.of('sent').some((m) => m.id === sent.message.id && m.dir === 'out'), 10000, 10);
	check('sent: the sender\'s side gets its own message as `sent`', true);
	await waitUntil('shown at the sender', () => wanda.of('shown').some((s) => s.service === 'consumers' && s.messages.some((m) => m.id === sent.message.id)), 20000, 10);
	check('shown: the sender\'s side learns it reached the consumers gateway, on its one connection', true);
	check('shown: not given to the receiving side', !carl.of('shown').some((s) => s.messages.some((m) => m.id === sent.message.id)));
	const shownEvent = wanda.of('shown').find((s) => s.messages.some((m) => m.id === sent.message.id)).messages.find((m) => m.id === sent.message.id);
	check('shown: each message with its created_at', shownEvent.created_at === sent.message.created_at, JSON.stringify({ shownEvent, sent: sent.message }));
	// Stored: a page that joins later learns from chat_state what the other side's gateway last pushed.
	const later = client(workers, { sub: 'wanda', name: 'Wanda' }, [CHAT]);
	await connected(later);
	await waitUntil('chat_state for the later page', () => later.of('chat_state').some((s) => s.chat_id === CHAT), 10000, 10);
	const laterShown = later.of('chat_state').find((s) => s.chat_id === CHAT).shown;
	const byConsumers = laterShown.filter((e) => e.service === 'consumers');
	check('chat_state.shown: the consumers gateway\'s last pushed message of the chat, with its created_at',
		byConsumers.length === 1 && byConsumers[0].id === sent.message.id &&
		byConsumers[0].created_at === sent.message.created_at && byConsumers[0].seq === shownEvent.seq, JSON.stringify(laterShown));
	later.close();

	// ---- read receipts
	const inbox = await postgres.query(`SELECT seq::int, message_id::text FROM workers.inbox WHERE chat_id = ${CHAT} ORDER BY seq`);
	const r1 = await wanda.ask('read', { chat_id: CHAT, seq: inbox[99].seq });
	check('read: stored, acked with the cursor', r1.ok && r1.seq === inbox[99].seq && r1.message_id === inbox[99].message_id && r1.moved === true, JSON.stringify(r1));
	await waitUntil('read at Carl', () => carl.of('read').some((r) => r.user.sub === 'wanda' && r.message_id === inbox[99].message_id), 10000, 10);
	check('read: broadcast to the other side with the message id it knows', true);
	const back = await wanda.ask('read', { chat_id: CHAT, seq: inbox[10].seq });
	check('read: never backwards (the stored cursor, moved false)', back.ok && back.seq === inbox[99].seq && back.moved === false, JSON.stringify(back));
	check('read: a chat outside the token is forbidden, a bad seq bad_request',
		(await wanda.ask('read', { chat_id: 999, seq: 1 })).error?.code === 'forbidden' &&
		(await wanda.ask('read', { chat_id: CHAT, seq: 'x' })).error?.code === 'bad_request');

	// ---- floods: typing and read beyond their rates get rate_limited; another client is not delayed
	const flood = await Promise.all(Array.from({ length: 30 }, () => wanda.ask('typing', { chat_id: CHAT })));
	check('typing flood: beyond the burst, rate_limited with retry_after_ms',
		flood.filter((r) => r.error?.code === 'rate_limited' && r.error.retry_after_ms > 0).length >= 20, JSON.stringify(flood.slice(-1)));
	const readFlood = await Promise.all(Array.from({ length: 40 }, () => wanda.ask('read', { chat_id: CHAT, seq: inbox[99].seq })));
	check('read flood: beyond the burst, rate_limited', readFlood.some((r) => r.error?.code === 'rate_limited'));
	// A /ws client floods history while Carl pages it: Carl's page arrives, and the flooder is answered too.
	const flooder = wsClient(workers, { sub: 'flooder' });
	await flooder.opened;
	const floodAnswers = Promise.all(Array.from({ length: 60 }, (_, i) => flooder.ask({ type: 'history', chat_id: CHAT, limit: 200 })));
	const otherPage = await wanda.ask('history', { chat_id: OTHER });
	check('a flood of history from one client does not stop another\'s on the same daemon', otherPage.ok && otherPage.messages.length === 3,
		JSON.stringify(otherPage.error));
	const fa = await floodAnswers;
	check('/ws: the flood is answered, the excess with busy or rate_limited errors',
		fa.every((f) => f.type === 'ack' || f.type === 'error') && fa.some((f) => f.type === 'error' && ['busy', 'rate_limited'].includes(f.error.code)),
		JSON.stringify(fa.filter((f) => f.type === 'error').map((f) => f.error.code).slice(0, 5)));
	const wsBad = await Promise.all([flooder.ask({ type: 'read', chat_id: 999, seq: 1 }), flooder.ask({ type: 'typing', chat_id: CHAT, typing: 'x' }),
		flooder.ask({ type: 'presence' })]);
	check('/ws: forbidden and bad_request as error frames, the connection stays open',
		wsBad[0].error?.code === 'forbidden' && wsBad[1].error?.code === 'bad_request' && wsBad[2].error?.code === 'bad_request' &&
		flooder.readyState === WebSocket.OPEN, JSON.stringify(wsBad));
	check('/ws: presence answered as an ack', (await flooder.ask({ type: 'presence', chat_id: CHAT })).users?.length >= 2);
	flooder.close();

	// ---- /metrics counts each answer by request and result, and the events each way
	const metric = async (daemon, name, labels = '') => {
		const text = await (await fetch(`http://127.0.0.1:${daemon.port}/metrics`)).text();
		const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
		return line === undefined ? NaN : Number(line.split(' ')[1]);
	};
	const req = (request, result) => metric(workers, 'chat_outboxd_gateway_conversation_requests_total', `{request="${request}",result="${result}"}`);
	const typingLimited = flood.filter((r) => r.error?.code === 'rate_limited').length;
	const wsLimited = fa.filter((f) => f.type === 'error' && f.error.code === 'rate_limited').length;
	const wsBusy = fa.filter((f) => f.type === 'error' && f.error.code === 'busy').length;
	const m = {
		typingLimited: await req('typing', 'rate_limited'), historyLimited: await req('history', 'rate_limited'),
		historyBusy: await req('history', 'busy'), readForbidden: await req('read', 'forbidden'),
		typingPublished: await metric(workers, 'chat_outboxd_gateway_conversation_published_total', '{event="typing"}'),
		typingReceived: 0,
	};
	check('/metrics: typing, history and read answers counted by result (the workers daemon)',
		m.typingLimited === typingLimited && m.historyLimited >= wsLimited && m.historyBusy >= wsBusy && m.readForbidden >= 2,
		JSON.stringify({ ...m, typingLimited_seen: typingLimited, wsLimited, wsBusy }));
	// pub/sub delivers after PUBLISH answered: the other daemon's count may still be coming
	await waitUntil('typing received by the consumers daemon', async () =>
		(m.typingReceived = await metric(consumers, 'chat_outboxd_gateway_conversation_received_total', '{event="typing"}')) >= m.typingPublished, 10000, 50);
	check('/metrics: typing events published by one daemon are received by the other',
		m.typingPublished >= flood.length - typingLimited && m.typingReceived >= m.typingPublished, JSON.stringify(m));
	await waitUntil('the flooder out of presence', async () => !names((await wanda.ask('presence', { chat_id: CHAT })).users).includes('flooder'), 10000, 50);

	// ---- durable across a restart: the cursor is given on join after the workers daemon restarts.
	// Kim is only on the workers daemon and does not reconnect: her member outlives the kill until it expires.
	const kim = io(`http://127.0.0.1:${workers.port}`, { auth: { token: token([CHAT], { sub: 'kim', name: 'Kim' }) }, transports: ['websocket'], reconnection: false });
	await waitUntil('Kim announced to Carl', () => carl.of('presence').some((p) => p.user.sub === 'kim' && p.present), 10000, 10);
	await workers.stop('SIGKILL');
	await workers.start();
	await waitUntil('Wanda back', () => wanda.connected, 20000, 20);
	await waitUntil('chat_state after the restart', () => wanda.of('chat_state').filter((s) => s.chat_id === CHAT).length >= 2, 20000, 10);
	const after = wanda.of('chat_state').filter((s) => s.chat_id === CHAT).at(-1);
	check('read: durable across a daemon restart (chat_state.my_read), unread = rows after it',
		after.my_read?.seq === inbox[99].seq && after.unread === 200, JSON.stringify({ my_read: after.my_read, unread: after.unread }));
	check('chat_state: every user\'s last cursor (reads)', after.reads.some((r) => r.user.sub === 'wanda' && r.seq === inbox[99].seq));
	const backAfter = await wanda.ask('read', { chat_id: CHAT, seq: inbox[5].seq });
	check('read: still never backwards after the restart', backAfter.seq === inbox[99].seq && backAfter.moved === false);

	// ---- timeout: the killed daemon renews Kim no more. Her member's expiry is moved into the past (what
	// 30 s without renewal does); the next presence request in the chat drops her and announces it.
	check('presence: a client of a killed daemon stays until its member expires',
		names((await carl.ask('presence', { chat_id: CHAT })).users).includes('workers:kim:Kim'));
	const key = `bull:chat_outbox:chat:${CHAT}:presence`;
	const rcli = (...a) => execFileSync('redis-cli', ['-p', env('REDIS_PORT'), ...a]).toString().trim();
	const kims = rcli('ZRANGE', key, '0', '-1').split('\n').filter((m) => m.split('\t')[1] === 'kim');
	for (const m of kims) rcli('ZADD', key, 'XX', String(Date.now() - 1000), m);
	const afterExpiry = names((await carl.ask('presence', { chat_id: CHAT })).users);
	await waitUntil('Kim gone at Carl', () => carl.of('presence').some((p) => p.user.sub === 'kim' && p.present === false), 10000, 10);
	check('presence: once expired, dropped from the list and announced as gone to both sides',
		!afterExpiry.includes('kim') && kims.length === 1, `${afterExpiry}; ${kims.length} member(s)`);
	kim.close();

	// ---- a closed page drops out of presence
	carl.close();
	let last = '';
	const gone = await waitFor('Carl gone from presence', async () => (last = names((await wanda.ask('presence', { chat_id: CHAT })).users)) === 'workers:wanda:Wanda', 10000, 100);
	check('presence: a closed connection drops its user', gone, last);
	wanda.close();
} catch (e) {
	check(`no exception: ${e.stack}`, false);
} finally {
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
finish();
