// tests/gateway/socketio.mjs - the real socket.io-client 4.8.1 against the gateway: default options
// (polling, then the upgrade), websocket-only, heartbeats, room delivery, join/leave, auth refusals, the clients gauge.
import WebSocket from 'ws';
import { PORT, chatsClaimCases, check, finish, insertInbox, metric, sioClient, sleep, sql, token, waitFor } from './peer_lib.mjs';

async function connected(socket) {
	return waitFor('connect', () => socket.connected || socket.errors.length > 0);
}

// 1. default options: polling first, then upgraded to websocket; survives >= 3 ping cycles.
{
	const s = sioClient({ auth: { token: token([42]) } });
	await connected(s);
	check('default client connects', s.connected, s.errors.map((e) => e.message).join());
	let upgraded = false;
	s.io.engine.on('upgrade', () => { upgraded = true; });
	await waitFor('upgrade', () => s.io.engine.transport.name === 'websocket');
	check('default client upgraded to websocket', s.io.engine.transport.name === 'websocket');
	let pings = 0;
	s.io.engine.on('ping', () => pings++);
	await waitFor('3 pings', () => pings >= 3, 10000); // ping interval 300 ms (tests/gateway/tests.cmake)
	check('stays connected across >= 3 pings', s.connected && pings >= 3, `pings=${pings}`);
	s.close();
	void upgraded;
}

// 2. websocket-only, messages for its room only, with the offset as the last argument.
{
	const a = sioClient({ transports: ['websocket'], auth: { token: token([42]) } });
	const b = sioClient({ transports: ['websocket'], auth: { token: token([43]) } });
	const p = sioClient({ transports: ['polling'], auth: { token: token([42, 43]) } });
	await connected(a); await connected(b); await connected(p);
	check('websocket-only clients connect', a.connected && b.connected && p.connected);
	check('websocket-only transport', a.io.engine.transport.name === 'websocket');
	let pings = 0;
	a.io.engine.on('ping', () => pings++);
	// A client's send goes to the other service (workers.send_message → chat-replies); what this
	// daemon (service workers) pushes comes from consumers.send_message → relay → chat-messages.
	// The sender is the token's sub (token() signs sub 'test'); a `sender` the client names is ignored.
	const r = await a.timeout(5000).emitWithAck('send', { chat_id: 42, body: 'reply 42', sender: 'mallory' });
	check('send acks with the stored row, sender = the token\'s sub', r.ok === true && r.message.body === 'reply 42' &&
		r.message.chat_id === 42 && typeof r.message.id === 'string' && typeof r.message.created_at === 'string' &&
		r.message.sender === 'test', JSON.stringify(r));
	check('the sent row is in workers.messages, with the sub as sender',
		sql(`SELECT sender FROM workers.messages WHERE id = '${r.message.id}'`) === 'test');
	const id42 = sql(`SELECT id FROM consumers.send_message(42, 'hello 42', 'bob')`);
	await waitFor('message on chat 42', () => a.messages.length >= 1 && p.messages.length >= 1, 20000);
	const m = a.messages[0];
	check('room member gets {id,chat_id,body,created_at,sender,seq}', m && m.id === id42 && m.chat_id === 42 &&
		m.body === 'hello 42' && typeof m.seq === 'number' && typeof m.created_at === 'string' && m.sender === 'bob' &&
		Object.keys(m).length === 7, JSON.stringify(m));
	check('offset is the seq as a string', m && m.offset === String(m.seq));
	check('polling-only client gets it too', p.messages.length === 1 && p.messages[0].id === id42);
	await sleep(300);
	check('other room gets nothing', b.messages.length === 0);
	await waitFor('a ping over websocket', () => pings >= 1, 10000);
	check('pings over websocket', pings >= 1, `pings=${pings}`);

	// join / leave with acks
	const j1 = await a.timeout(3000).emitWithAck('join', { chat_id: 43 });
	check('join of a chat outside the token is forbidden', j1.error === 'forbidden', JSON.stringify(j1));
	const l = await p.timeout(3000).emitWithAck('leave', { chat_id: 43 });
	check('leave acks', l.ok === true);
	sql(`SELECT consumers.send_message(43, 'to 43')`);
	await waitFor('b gets 43', () => b.messages.length === 1, 20000);
	await sleep(300);
	check('left room delivers nothing', p.messages.length === 1);
	const j2 = await p.timeout(3000).emitWithAck('join', { chat_id: 43 });
	check('join acks ok', j2.ok === true, JSON.stringify(j2));

	// send errors
	const e1 = await a.timeout(5000).emitWithAck('send', { chat_id: 43, body: 'x' });
	check('send outside the token is forbidden (no SQL)', e1.ok === false && e1.error.message === 'forbidden', JSON.stringify(e1));
	const e2 = await a.timeout(5000).emitWithAck('send', { chat_id: 42, body: '' });
	check('empty body -> error ack with sqlstate 22023', e2.ok === false && e2.error.sqlstate === '22023', JSON.stringify(e2));
	const e3 = await a.timeout(5000).emitWithAck('send', { chat_id: 42, body: 'cut\u0000here' });
	check('a NUL in the body -> error ack invalid_body, nothing stored', e3.ok === false && e3.error.code === 'invalid_body' &&
		sql(`SELECT count(*) FROM workers.messages WHERE body LIKE 'cut%'`) === '0', JSON.stringify(e3));
	a.close(); b.close(); p.close();
}

// 3. auth refusals: connect_error {message, data.reason} and no messages
for (const [name, auth, want] of [
	['missing token', {}, 'unauthorized'],
	['bad signature', { token: token([42]).slice(0, -2) + 'xx' }, 'unauthorized'],
	['expired token', { token: token([42], { exp: Math.floor(Date.now() / 1000) - 10 }) }, 'unauthorized'],
	['forbidden chat', { token: token([42]), chats: [42, 99] }, 'forbidden'],
]) {
	for (const transports of [['websocket'], ['polling', 'websocket']]) {
		const s = sioClient({ transports, auth });
		await connected(s);
		const e = s.errors[0];
		check(`${name} (${transports[0]}) -> connect_error ${want}`, !s.connected && e && e.message === want &&
			e.data && typeof e.data.reason === 'string', e ? `${e.message} ${JSON.stringify(e.data)}` : 'no error');
		s.close();
	}
}

// 3b. the token's `chats` claim: absent is `chats missing`; present but not an array of integers is
// `bad chats` (docs/client-protocol.md, Tokens), on either transport.
for (const [name, tok, want] of chatsClaimCases) {
	for (const transports of [['websocket'], ['polling', 'websocket']]) {
		const s = sioClient({ transports, auth: { token: tok } });
		await connected(s);
		const e = s.errors[0];
		check(`chats ${name} (${transports[0]}) -> unauthorized, reason ${want}`, !s.connected && e &&
			e.message === 'unauthorized' && e.data && e.data.reason === want,
		e ? `${e.message} ${JSON.stringify(e.data)}` : 'no error');
		s.close();
	}
}

// 4. auth.chats narrows the rooms; unknown namespace is refused
{
	const s = sioClient({ transports: ['websocket'], auth: { token: token([42, 43]), chats: [43] } });
	await connected(s);
	check('auth.chats subset accepted', s.connected);
	insertInbox(42, ['direct-42']); // inbox rows without the consumer: only catch-up sees them
	s.close();
}
// 5. A socket that leaves "/" (DISCONNECT) before its token expires, on an engine session that stays
// open, is counted out once: the connected-clients gauge goes back to 0 and stays there after exp.
{
	const raw = new WebSocket(`ws://127.0.0.1:${PORT}/socket.io/?EIO=4&transport=websocket`);
	const got = [];
	raw.on('message', (d) => { const t = d.toString(); got.push(t); if (t === '2') raw.send('3'); });
	raw.on('error', () => {});
	await waitFor('open', () => got.length > 0);
	raw.send('40' + JSON.stringify({ token: token([7], { exp: Math.floor(Date.now() / 1000) + 2 }) }));
	await waitFor('CONNECT ok', () => got.some((t) => t.startsWith('40{')));
	const gauge = () => metric('chat_outboxd_clients_connected');
	check('counted in while connected', await gauge() === 1, String(await gauge()));
	raw.send('41');
	await waitFor('counted out', async () => await gauge() === 0, 3000);
	await sleep(3000); // past the token's exp
	const after = await gauge();
	check('a socket that left before its token expired is counted out once', after === 0, `gauge ${after}`);
	raw.close();
}
finish();
