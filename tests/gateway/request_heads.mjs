// tests/gateway/request_heads.mjs - request heads libwebsockets would drop without a word get an HTTP
// answer from the gateway (docs/client-protocol.md, "HTTP limits"), and nothing else on the gateway notices:
//   - a request target with a percent-encoded NUL (path or query; GET, polling, /ws upgrade): 400;
//   - a head over 16,384 bytes, or over 64 header lines and query arguments together: 431;
//   - a head that has not ended 20 s after the connection opened: 408;
// each with Connection: close, and the connection closed after it. 1,030 connections sending their
// heads at once fill the listener (1,024 read at a time; it logs that new ones wait) and are all served. Meanwhile a Socket.IO client and a
// /ws client stay connected and are shown every message sent before, during and after; heads within
// the bounds (15,000 bytes, 64 fields, a head sent in pieces) are served.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { PORT, check, finish, messagesOf, sioClient, sql, token, waitFor, wsClient } from './peer_lib.mjs';

// raw sends bytes, in pieces if given several (each after the previous one was written), and resolves
// with everything the daemon sent once it closed the connection; `hold` keeps the last piece back until
// the promise it returns resolves.
function raw(pieces, hold = null) {
	return new Promise((resolve, reject) => {
		const s = net.connect(PORT, '127.0.0.1');
		const got = [];
		s.on('data', (d) => got.push(d));
		s.on('error', () => {}); // a reset after the answer is read as a close
		s.on('close', () => resolve(Buffer.concat(got).toString('latin1')));
		s.on('connect', async () => {
			try {
				const list = [].concat(pieces);
				for (let i = 0; i < list.length; i++) {
					if (hold && i === list.length - 1) await hold;
					await new Promise((r) => s.write(list[i], r));
				}
			} catch (e) {
				reject(e);
			}
		});
	});
}

const statusLine = (resp) => resp.split('\r\n')[0];
const closes = (resp) => /\r\nconnection: close\r\n/i.test(resp.split('\r\n\r\n')[0] + '\r\n');
const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
const get = (target, headers = '') => `GET ${target} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;
const fields = (n) => Array.from({ length: n }, (_, i) => `X-F${i}: v\r\n`).join('');
const args = (n) => Array.from({ length: n }, (_, i) => `a${i}=1`).join('&');
const big = (n) => 'a'.repeat(n);

// Clients that must not notice.
const sio = sioClient({ auth: { token: token([31]) }, transports: ['websocket'] });
const ws = wsClient(`?token=${token([31])}`);
await waitFor('both clients connected', () => sio.connected && ws.frames.some((f) => f.type === 'welcome'));
sql(`SELECT consumers.send_message(31, 'before')`);
await waitFor('"before" shown', () => sio.messages.length === 1 && messagesOf(ws).length === 1, 20000);

// A head that never ends, opened first: answered 408 once its deadline passed.
let release;
const never = raw([get('/healthz').slice(0, 20), '\r\n'], new Promise((r) => { release = r; }));

// A head in pieces, its end held back while the hostile ones are answered.
let finishSlow;
const slow = raw(['GET /healthz HTTP/1.1\r\n', 'Host: x\r\nConnection: close\r\n', '\r\n'], new Promise((r) => { finishSlow = r; }));

const refused = [
	[400, 'a NUL in the path', get('/a%00b')],
	[400, 'a NUL at the path\'s end', get('/index.html%00')],
	[400, 'a NUL after /', get('/%00')],
	[400, 'a NUL in the query', get('/healthz?a=%00')],
	[400, 'a NUL in a polling request', get('/socket.io/?EIO=4&transport=polling&t=%00')],
	[400, 'a NUL in a /ws upgrade', get(`/ws%00?token=${token([31])}`, upgrade)],
	[431, 'two 9,000-byte values', get(`/healthz?token=${big(9000)}`, `Authorization: Bearer ${big(9000)}\r\n`)],
	[431, 'a 20,000-byte header', get('/healthz', `X-Long: ${big(20000)}\r\n`)],
	[431, 'a 17,000-byte /ws upgrade', get(`/ws?token=${token([31])}`, `${upgrade}X-Long: ${big(17000)}\r\n`)],
	[431, '65 header lines', get('/healthz', fields(64))], // with Host: 65
	[431, '65 query arguments', `GET /healthz?${args(65)} HTTP/1.1\r\n\r\n`],
	[431, '33 query arguments and 32 header lines', get(`/healthz?${args(33)}`, fields(31))],
];
const answers = await Promise.all(refused.map(([, , head]) => raw(head)));
for (let i = 0; i < refused.length; i++) {
	const [status, name, head] = refused[i];
	const want = status === 400 ? 'HTTP/1.1 400 Bad Request' : 'HTTP/1.1 431 Request Header Fields Too Large';
	check(`${name} (${head.length} bytes) -> ${status}, Connection: close, closed`,
		statusLine(answers[i]) === want && closes(answers[i]), answers[i].slice(0, 200));
}
sql(`SELECT consumers.send_message(31, 'during')`);

// Within the bounds: served.
const okHeads = [
	['a 15,000-byte head', get('/healthz', `Authorization: Bearer ${big(7000)}\r\nX-Long: ${big(7900)}\r\n`)],
	['64 fields', get(`/healthz?${args(32)}`, `${fields(30)}Connection: close\r\n`)],
	['HTTP/1.0', 'GET /healthz HTTP/1.0\r\n\r\n'],
];
for (const [name, head] of okHeads) {
	const resp = await raw(head.includes('HTTP/1.0') || head.includes('Connection: close') ? head : head.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
	check(`${name} (${head.length} bytes) -> 200`, statusLine(resp).startsWith('HTTP/1') && statusLine(resp).endsWith(' 200 OK'),
		resp.slice(0, 200));
}
finishSlow();
const slowResp = await slow;
check('a head sent in pieces, its end after the refusals -> 200', statusLine(slowResp) === 'HTTP/1.1 200 OK', slowResp.slice(0, 200));

sql(`SELECT consumers.send_message(31, 'after')`);
const bodies = (list) => JSON.stringify(list.map((m) => m.body));
await waitFor('"during" and "after" shown', () => sio.messages.length === 3 && messagesOf(ws).length === 3, 20000);
check('the Socket.IO client was shown every message, in order', bodies(sio.messages) === '["before","during","after"]',
	bodies(sio.messages));
check('the /ws client was shown every message, in order', bodies(messagesOf(ws)) === '["before","during","after"]' &&
	!ws.closed, bodies(messagesOf(ws)));
const fresh = wsClient(`?token=${token([31])}`);
await waitFor('a new /ws client welcomed', () => fresh.frames.some((f) => f.type === 'welcome'));
check('a new /ws client connects after the refusals', true);
fresh.close();

const neverResp = await never;
release();
check('a head that never ends -> 408, Connection: close, closed', statusLine(neverResp) === 'HTTP/1.1 408 Request Timeout' &&
	closes(neverResp), neverResp.slice(0, 200));

// More connections than the listener reads heads of at once (1,024): the listener waits (its log line
// says so), the kernel's backlog holds the rest, and when the heads end every connection is served.
const heldBack = Array.from({ length: 1030 }, () => {
	let end;
	const done = raw(['GET /healthz HTTP/1.1\r\nHost: x\r\n', 'Connection: close\r\n\r\n'], new Promise((r) => { end = r; }));
	return { done, end };
});
const log = () => readFileSync(`${process.env.H_DIR}/daemon.log`, 'utf8');
await waitFor('the listener full', () => /--listen: 1024 connections are sending their request heads; new ones wait/.test(log()), 30000);
check('1,024 connections sending their heads: the listener waits', true);
heldBack.forEach((h) => h.end());
const served = await Promise.all(heldBack.map((h) => h.done));
const ok = served.filter((r) => statusLine(r) === 'HTTP/1.1 200 OK').length;
check('all 1,030 served once their heads ended', ok === heldBack.length, `${ok} of ${heldBack.length}`);

sio.close();
ws.close();
finish();
