// tests/gateway/client_msg_id.mjs - a send's client_msg_id through the gateway (docs/client-protocol.md,
// "Client message ids"), with real peers against two daemons (consumers and workers, one Postgres,
// one Redis, the extension's relay), on Socket.IO and /ws:
//  - the ack carries the stored message's id and its client_msg_id, and so does `sent` to the
//    sender's other tab; the same key again is acked with the same message, repeat:true, nothing
//    written; the other side is shown the message once;
//  - the same key with another body: client_msg_id_conflict (CM409), nothing written;
//  - a hostile client reusing another user's key stores its own message, never gets the other's;
//  - refused before the database: an empty, over-long or control-character key, a key that is not a
//    string, a key from a token without a sub;
//  - two connections sending the same key at once store one message;
//  - an edit sent twice and a delete sent twice are acked both times, and write one event each.
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { check, finish, waitFor } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';
import { openWs } from '../harness/ws_client.mjs';
import { connected, recordingClient } from './sides_lib.mjs';

const CHAT = 55;
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')) });
const q = (sql, params) => postgres.query(sql, params);
const count = async (sql, params) => Number((await q(sql, params))[0].n);
const messages = () => count('SELECT count(*) AS n FROM consumers.messages WHERE chat_id = $1', [CHAT]);
const events = () => count('SELECT count(*) AS n FROM consumers.outbox WHERE chat_id = $1', [CHAT]);

try {
	await Promise.all([workers.start(), consumers.start()]);
	const cara = recordingClient(consumers, { sub: 'cara' }, [CHAT]);
	const caraTab = recordingClient(consumers, { sub: 'cara' }, [CHAT]); // her second tab: `sent`
	const mallory = recordingClient(consumers, { sub: 'mallory' }, [CHAT]);
	const anon = recordingClient(consumers, { sub: '' }, [CHAT]); // no sub
	const wes = recordingClient(workers, { sub: 'wes' }, [CHAT]); // the other side
	const ws = openWs(`ws://127.0.0.1:${consumers.port}/ws?token=${token([CHAT], { sub: 'cara' })}`);
	await Promise.all([connected(cara), connected(caraTab), connected(mallory), connected(anon), connected(wes), ws.opened]);
	for (const s of [cara, caraTab, mallory, wes]) await s.ask('join', { chat_id: CHAT });

	// ---- Socket.IO: the ack, the repeat, `sent`
	const first = await cara.ask('send', { chat_id: CHAT, body: 'hello once', client_msg_id: 'sio-1' });
	check('socket.io ack: the stored message with its client_msg_id, not a repeat', first.ok && first.message.client_msg_id === 'sio-1' &&
		first.message.sender === 'cara' && first.repeat === undefined, JSON.stringify(first));
	const [m0, e0] = [await messages(), await events()];
	const again = await cara.ask('send', { chat_id: CHAT, body: 'hello once', client_msg_id: 'sio-1' });
	check('socket.io repeat: the same message, repeat:true', again.ok && again.message.id === first.message.id &&
		again.message.client_msg_id === 'sio-1' && again.repeat === true, JSON.stringify(again));
	check('the repeat wrote nothing', (await messages()) === m0 && (await events()) === e0);
	await waitFor('the other tab shown `sent`', () => caraTab.of('sent').some((m) => m.id === first.message.id), 10000);
	const sent = caraTab.of('sent').find((m) => m.id === first.message.id);
	check('`sent` carries the client_msg_id', sent?.client_msg_id === 'sio-1', JSON.stringify(sent));

	// ---- /ws: the same rules
	const wsFirst = await ws.ask({ type: 'send', chat_id: CHAT, body: 'ws once', client_msg_id: 'ws-1' });
	const wsAgain = await ws.ask({ type: 'send', chat_id: CHAT, body: 'ws once', client_msg_id: 'ws-1' });
	check('/ws ack: the stored message with its client_msg_id', wsFirst.type === 'ack' && wsFirst.message.client_msg_id === 'ws-1' &&
		wsFirst.repeat === undefined, JSON.stringify(wsFirst));
	check('/ws repeat: the same message, repeat:true', wsAgain.type === 'ack' && wsAgain.message.id === wsFirst.message.id && wsAgain.repeat === true,
		JSON.stringify(wsAgain));
	// a key is per sender, not per protocol: cara's Socket.IO key on /ws is the same key
	const cross = await ws.ask({ type: 'send', chat_id: CHAT, body: 'hello once', client_msg_id: 'sio-1' });
	check('the key is the sender\'s on either protocol', cross.message?.id === first.message.id && cross.repeat === true, JSON.stringify(cross));

	// ---- another body with the same key
	const [m1, e1] = [await messages(), await events()];
	const conflict = await cara.ask('send', { chat_id: CHAT, body: 'something else', client_msg_id: 'sio-1' });
	check('another body: client_msg_id_conflict, CM409', !conflict.ok && conflict.error.code === 'client_msg_id_conflict' &&
		conflict.error.sqlstate === 'CM409', JSON.stringify(conflict));
	const wsConflict = await ws.ask({ type: 'send', chat_id: CHAT, body: 'something else', client_msg_id: 'ws-1' });
	check('/ws another body: an error frame, client_msg_id_conflict', wsConflict.type === 'error' && wsConflict.error.code === 'client_msg_id_conflict',
		JSON.stringify(wsConflict));
	check('the conflicts wrote nothing', (await messages()) === m1 && (await events()) === e1);

	// ---- a hostile reuse of cara's key
	const stolen = await mallory.ask('send', { chat_id: CHAT, body: 'hello once', client_msg_id: 'sio-1' });
	check('mallory reusing cara\'s key stores her own message', stolen.ok && stolen.message.id !== first.message.id &&
		stolen.message.sender === 'mallory' && stolen.repeat === undefined, JSON.stringify(stolen));
	const stolenOther = await mallory.ask('send', { chat_id: CHAT, body: 'other body', client_msg_id: 'ws-1' });
	check('with another body too: her own message, no conflict with cara\'s', stolenOther.ok && stolenOther.message.id !== wsFirst.message.id,
		JSON.stringify(stolenOther));

	// ---- refused before the database
	const [m2, e2] = [await messages(), await events()];
	const bad = {
		empty: await cara.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: '' }),
		long: await cara.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: 'k'.repeat(65) }),
		control: await cara.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: 'a\nb' }),
		number: await cara.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: 7 }),
		noSub: await anon.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: 'anon-1' }),
		wsLong: await ws.ask({ type: 'send', chat_id: CHAT, body: 'x', client_msg_id: 'é'.repeat(33) }),
	};
	check('bad keys refused with invalid_client_msg_id', Object.entries(bad).every(([k, a]) =>
		(k.startsWith('ws') ? a.type === 'error' && a.error.code === 'invalid_client_msg_id' : !a.ok && a.error.code === 'invalid_client_msg_id' && !a.error.sqlstate)),
	JSON.stringify(bad));
	const fits = await cara.ask('send', { chat_id: CHAT, body: 'x', client_msg_id: 'é'.repeat(32) });
	check('64 bytes fit', fits.ok, JSON.stringify(fits));
	check('the refusals wrote nothing', (await messages()) === m2 + 1 && (await events()) === e2 + 1);

	// ---- two connections at once, the same key: one message
	const other = openWs(`ws://127.0.0.1:${consumers.port}/ws?token=${token([CHAT], { sub: 'cara' })}`);
	await other.opened;
	const [m3] = [await messages()];
	const racing = await Promise.all([
		cara.ask('send', { chat_id: CHAT, body: 'racing', client_msg_id: 'race-1' }),
		ws.ask({ type: 'send', chat_id: CHAT, body: 'racing', client_msg_id: 'race-1' }),
		other.ask({ type: 'send', chat_id: CHAT, body: 'racing', client_msg_id: 'race-1' }),
	]);
	const ids = new Set(racing.map((a) => a.message?.id));
	check('three at once: one message, every ack names it, two repeats', ids.size === 1 && !ids.has(undefined) &&
		racing.filter((a) => a.repeat === true).length === 2 && (await messages()) === m3 + 1, JSON.stringify(racing));
	other.close();

	// ---- edits and deletes sent again
	const e3 = await events();
	const edit1 = await cara.ask('edit', { message_id: first.message.id, body: 'hello edited' });
	const edit2 = await cara.ask('edit', { message_id: first.message.id, body: 'hello edited' });
	check('an edit sent twice: both acked with the edited message, one event', edit1.ok && edit2.ok && edit2.message.body === 'hello edited' &&
		(await events()) === e3 + 1, JSON.stringify([edit1, edit2]));
	const del1 = await ws.ask({ type: 'delete', message_id: wsFirst.message.id });
	const del2 = await ws.ask({ type: 'delete', message_id: wsFirst.message.id });
	check('a delete sent twice: both acked, one event', del1.type === 'ack' && del2.type === 'ack' && typeof del2.message.deleted_at === 'string' &&
		(await events()) === e3 + 2, JSON.stringify([del1, del2]));
	const malloryDel = await mallory.ask('delete', { message_id: wsFirst.message.id });
	check('another user deleting the deleted message is still refused', !malloryDel.ok, JSON.stringify(malloryDel));
	const afterDelete = await cara.ask('send', { chat_id: CHAT, body: 'ws once', client_msg_id: 'ws-1' });
	check('the key of a deleted message still answers it', afterDelete.ok && afterDelete.message.id === wsFirst.message.id && afterDelete.repeat === true,
		JSON.stringify(afterDelete));

	// ---- the other side: every stored message once
	const stored = (await q('SELECT id::text FROM consumers.messages WHERE chat_id = $1', [CHAT])).map((r) => r.id);
	await waitFor('wes shown every message', () => stored.every((id) => wes.of('message').some((m) => m.id === id)), 30000);
	const shown = wes.of('message').filter((m) => stored.includes(m.id));
	check(`the other side shown each of ${stored.length} messages once`, shown.length === stored.length &&
		new Set(shown.map((m) => m.id)).size === stored.length, JSON.stringify(shown.map((m) => m.body)));
	for (const s of [cara, caraTab, mallory, anon, wes]) s.close();
	ws.close();
} catch (e) {
	check('client_msg_id ran to the end', false, e.stack);
} finally {
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
finish();
