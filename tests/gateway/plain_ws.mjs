// tests/gateway/plain_ws.mjs - the plain JSON WebSocket endpoint /ws: auth by ?token= and by
// Authorization: Bearer, close codes 4401/4403, rooms, join/leave/send/ping, bad frames.
import { chatsClaimCases, check, finish, messagesOf, sleep, sql, token, waitFor, wsClient } from './peer_lib.mjs';

const opened = (ws) => waitFor('welcome or close', () => ws.frames.length > 0 || ws.closed);

// refusals
for (const [name, q, headers, code] of [
	['missing token', '', {}, 4401],
	['bad token', `?token=${token([1]).slice(0, -3)}abc`, {}, 4401],
	['expired token', `?token=${token([1], { exp: Math.floor(Date.now() / 1000) - 5 })}`, {}, 4401],
	['forbidden chat', `?token=${token([1])}&chats=1,2`, {}, 4403],
]) {
	const ws = wsClient(q, headers);
	await waitFor('close', () => ws.closed, 5000);
	check(`${name} -> close ${code}`, ws.closed && ws.closed.code === code && messagesOf(ws).length === 0,
		JSON.stringify(ws.closed));
}

// the token's `chats` claim: absent is `chats missing`, present but not an array of integers `bad
// chats`; the close reason says which, for ?token= and Authorization: Bearer alike
for (const [name, tok, want] of chatsClaimCases) {
	for (const [how, q, headers] of [['?token=', `?token=${tok}`, {}], ['Bearer', '', { Authorization: `Bearer ${tok}` }]]) {
		const ws = wsClient(q, headers);
		await waitFor('close', () => ws.closed, 5000);
		check(`chats ${name} (${how}) -> close 4401 unauthorized: ${want}`, ws.closed && ws.closed.code === 4401 &&
			ws.closed.reason === `unauthorized: ${want}`, JSON.stringify(ws.closed));
	}
}

// token in the Authorization header, rooms from the token
const a = wsClient('', { Authorization: `Bearer ${token([11, 12])}` });
await opened(a);
check('bearer header accepted; welcome lists the chats', a.frames[0]?.type === 'welcome' &&
	JSON.stringify(a.frames[0].chats) === '[11,12]', JSON.stringify(a.frames[0]));
// ?chats= narrows
const b = wsClient(`?token=${token([11, 12])}&chats=12`);
await opened(b);
check('?chats= subset', JSON.stringify(b.frames[0]?.chats) === '[12]');

sql(`SELECT consumers.send_message(11, 'to-11')`);
sql(`SELECT consumers.send_message(12, 'to-12', 'carol')`);
await waitFor('deliveries', () => messagesOf(a).length === 2 && messagesOf(b).length === 1, 20000);
check('room delivery', JSON.stringify(messagesOf(a).map((m) => m.body)) === '["to-11","to-12"]' &&
	messagesOf(b)[0]?.body === 'to-12', JSON.stringify(a.frames));
const m = messagesOf(a)[0];
check('message shape {id,chat_id,body,created_at,sender,seq}', m && typeof m.id === 'string' && m.chat_id === 11 &&
	typeof m.created_at === 'string' && typeof m.seq === 'number' && m.sender === null && Object.keys(m).length === 6,
	JSON.stringify(m));
check('sender of a message sent with one', messagesOf(a)[1]?.sender === 'carol' && messagesOf(b)[0]?.sender === 'carol');

const reply = (ws, ref) => waitFor(`reply ${ref}`, () => ws.frames.some((f) => f.ref === ref), 5000)
	.then(() => ws.frames.find((f) => f.ref === ref));
b.send(JSON.stringify({ type: 'ping', ref: 'p1' }));
check('ping -> pong', (await reply(b, 'p1'))?.type === 'pong');
b.send(JSON.stringify({ type: 'join', ref: 'j1', chat_id: 11 }));
check('join within the token -> ack ok', (await reply(b, 'j1'))?.ok === true);
b.send(JSON.stringify({ type: 'join', ref: 'j2', chat_id: 99 }));
check('join outside the token -> error forbidden', (await reply(b, 'j2'))?.error?.message === 'forbidden');
b.send(JSON.stringify({ type: 'leave', ref: 'l1', chat_id: 12 }));
check('leave -> ack ok', (await reply(b, 'l1'))?.ok === true);
b.send(JSON.stringify({ type: 'send', ref: 's1', chat_id: 11, body: 'from ws' }));
const s1 = await reply(b, 's1');
check('send -> ack with the stored message, sender = the token\'s sub', s1?.type === 'ack' && s1.message?.body === 'from ws' &&
	s1.message.chat_id === 11 && s1.message.sender === 'test', JSON.stringify(s1));
// a sub send_message refuses as a sender: the documented error, nothing stored
{
	const evil = wsClient(`?token=${token([11], { sub: 'ev\u001bil' })}`);
	await opened(evil);
	evil.send(JSON.stringify({ type: 'send', ref: 'e1', chat_id: 11, body: 'from evil' }));
	const e1 = await reply(evil, 'e1');
	check('send with a control character in the sub -> error 22023, nothing stored', e1?.type === 'error' &&
		e1.error?.sqlstate === '22023' && e1.error.message === 'sender must not contain control characters' &&
		sql(`SELECT count(*) FROM workers.messages WHERE body = 'from evil'`) === '0', JSON.stringify(e1));
	evil.close();
	// a token without a sub ("", as tests/gateway/conversation.mjs makes one) sends without a sender
	const anonymous = wsClient(`?token=${token([11], { sub: '' })}`);
	await opened(anonymous);
	anonymous.send(JSON.stringify({ type: 'send', ref: 'a1', chat_id: 11, body: 'from nobody' }));
	const a1 = await reply(anonymous, 'a1');
	check('send with a token without sub -> stored with sender null', a1?.type === 'ack' && a1.message?.sender === null &&
		sql(`SELECT count(*) FROM workers.messages WHERE body = 'from nobody' AND sender IS NULL`) === '1', JSON.stringify(a1));
	anonymous.close();
}
b.send(JSON.stringify({ type: 'send', ref: 's2', chat_id: 11, body: '' }));
const s2 = await reply(b, 's2');
check('send error -> error frame with sqlstate', s2?.type === 'error' && s2.error?.sqlstate === '22023', JSON.stringify(s2));
// A NUL cannot be stored in a text column: refused, not cut short at the NUL.
b.send(JSON.stringify({ type: 'send', ref: 'n1', chat_id: 11, body: 'before\u0000after' }));
const n1 = await reply(b, 'n1');
check('send with a NUL in the body -> error invalid_body, nothing stored', n1?.type === 'error' &&
	n1.error?.code === 'invalid_body' && sql(`SELECT count(*) FROM workers.messages WHERE body LIKE 'before%'`) === '0', JSON.stringify(n1));
b.send(JSON.stringify({ type: 'send', ref: 's3', chat_id: 99, body: 'x' }));
check('send outside the token -> forbidden', (await reply(b, 's3'))?.error?.message === 'forbidden');

sql(`SELECT consumers.send_message(11, 'after-join')`);
sql(`SELECT consumers.send_message(12, 'after-leave')`);
await waitFor('after-join', () => messagesOf(b).some((x) => x.body === 'after-join'), 20000);
await sleep(300);
check('joined room delivers, left room does not', !messagesOf(b).some((x) => x.body === 'after-leave'));

// a bad frame closes only that connection
b.send('{not json');
await waitFor('b closed', () => b.closed, 3000);
check('malformed frame closes that connection (1008)', b.closed?.code === 1008, JSON.stringify(b.closed));
sql(`SELECT consumers.send_message(11, 'still-a')`);
await waitFor('a still receives', () => messagesOf(a).some((x) => x.body === 'still-a'), 20000);
check('the other connection keeps receiving', messagesOf(a).some((x) => x.body === 'still-a') && !a.closed);
a.close();
finish();
