// tests/gateway/faults.mjs - malformed, oversized, non-UTF-8, binary and reserved-name frames close
// only the offending connection (and count in frames_rejected); a healthy client keeps receiving.
// Also Engine.IO HTTP errors for polling requests (docs/protocols/socketio.md, 'Requests and HTTP errors').
import WebSocket from 'ws';
import { check, finish, PORT, URL, sioClient, sleep, sql, token, waitFor } from './peer_lib.mjs';

const metric = async (name) => {
	const text = await (await fetch(`${URL}/metrics`)).text();
	const line = text.split('\n').find((l) => l.startsWith(name + ' '));
	return line ? Number(line.split(' ')[1]) : NaN;
};

// a raw Engine.IO WebSocket client: handshake, CONNECT, then whatever the test sends
async function rawSocket() {
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/socket.io/?EIO=4&transport=websocket`);
	ws.got = [];
	ws.closed = null;
	ws.on('message', (d) => ws.got.push(d.toString()));
	ws.on('close', (code) => { ws.closed = code; });
	ws.on('error', () => {});
	await waitFor('open packet', () => ws.got.length >= 1);
	ws.send(`40${JSON.stringify({ token: token([5]) })}`);
	await waitFor('connect reply', () => ws.got.some((g) => g.startsWith('40')));
	return ws;
}

const healthy = sioClient({ transports: ['websocket'], auth: { token: token([5]) } });
await waitFor('healthy connects', () => healthy.connected);
const before = await metric('chat_outboxd_frames_rejected_total');

const cases = [
	['malformed JSON', (ws) => ws.send('42["send",{')],
	['unknown engine packet type', (ws) => ws.send('9')],
	['unknown socket.io packet type', (ws) => ws.send('49[]')],
	['reserved event name', (ws) => ws.send('42["disconnect"]')],
	['client ping (v4 forbids)', (ws) => ws.send('2')],
	['binary frame', (ws) => ws.send(Buffer.from([1, 2, 3]))],
	['invalid UTF-8', (ws) => ws.send(Buffer.from([0x34, 0x32, 0xff, 0xfe]), { binary: false })],
	['oversized frame', (ws) => ws.send('42["send",{"body":"' + 'x'.repeat(200000) + '"}]')],
];
for (const [name, send] of cases) {
	const ws = await rawSocket();
	send(ws);
	await waitFor(`${name} closes`, () => ws.closed !== null, 3000);
	check(`${name} closes that connection`, ws.closed !== null, `code=${ws.closed}`);
}
const after = await metric('chat_outboxd_frames_rejected_total');
check('frames_rejected counted each', after - before >= cases.length, `${before} -> ${after}`);

sql(`SELECT consumers.send_message(5, 'still here')`);
await waitFor('healthy receives', () => healthy.messages.length === 1, 20000);
check('the healthy client stayed connected and keeps receiving', healthy.connected && healthy.messages.length === 1);

// Engine.IO HTTP errors
const get = async (q, init) => { const r = await fetch(`${URL}/socket.io/?${q}`, init); return [r.status, await r.text()]; };
let [st, body] = await get('EIO=4&transport=flash');
check('unknown transport -> 400 code 0', st === 400 && JSON.parse(body).code === 0, body);
[st, body] = await get('EIO=3&transport=polling');
check('EIO=3 -> 400 code 5', st === 400 && JSON.parse(body).code === 5, body);
[st, body] = await get('EIO=4&transport=polling&sid=nope');
check('unknown sid -> 400 code 1', st === 400 && JSON.parse(body).code === 1, body);
[st, body] = await get('EIO=4&transport=polling', { method: 'POST', body: '40' });
check('handshake by POST -> 400 code 2', st === 400 && JSON.parse(body).code === 2, body);
[st, body] = await get('EIO=4&transport=websocket');
check('plain GET with transport=websocket -> 400 code 3', st === 400 && JSON.parse(body).code === 3, body);
[st, body] = await get('EIO=4&transport=polling');
check('polling handshake -> open packet offering websocket', st === 200 && body.startsWith('0{') &&
	JSON.parse(body.slice(1)).upgrades[0] === 'websocket', body);
const sid = JSON.parse(body.slice(1)).sid;
[st, body] = await get(`EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '42["a"' });
check('malformed polling POST -> 400 and the session is gone', st === 400, body);
[st, body] = await get(`EIO=4&transport=polling&sid=${sid}`);
check('... next GET: unknown sid', st === 400 && JSON.parse(body).code === 1, body);
[st, body] = await get('EIO=4&transport=polling');
const sid2 = JSON.parse(body.slice(1)).sid;
[st, body] = await get(`EIO=4&transport=polling&sid=${sid2}`, { method: 'POST', body: 'x'.repeat(200000) });
check('oversized polling POST -> 413', st === 413, `${st}`);
check('healthy client unaffected', healthy.connected);
healthy.close();
finish();
