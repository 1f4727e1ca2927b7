// bench/managed/shown.mjs <count> <pace_ms> - send -> shown: send_message() on one connection, the
// message's arrival at a Socket.IO client of chat-outboxd (--service workers) in its chat's room.
// One message every pace_ms; prints "p50 X / p99 Y ms (shown/sent)". Env: PGURL, DAEMON_URL,
// CHAT_OUTBOXD_JWT_SECRET. The npm packages are tests/node_modules'.
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const pg = require('pg');
const { io } = require('socket.io-client');
const { signToken } = await import('../../tests/harness/jwt.mjs');

const [count, pace] = [Number(process.argv[2] || 200), Number(process.argv[3] || 10)];
const chat = 424242;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tag = `shown-${process.pid}-${Date.now()}`;
const shown = new Map();
const socket = io(process.env.DAEMON_URL, {
	transports: ['websocket'], forceNew: true,
	auth: { token: signToken({ chats: [chat] }, process.env.CHAT_OUTBOXD_JWT_SECRET) },
});
socket.on('message', (m) => { if (m?.body?.startsWith(tag) && !shown.has(m.body)) shown.set(m.body, now()); });
await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject); });
const client = new pg.Client({ connectionString: process.env.PGURL });
await client.connect();
await sleep(200);
const sent = new Map();
for (let i = 0; i < count; i++) {
	const body = `${tag}-${i}`;
	sent.set(body, now());
	await client.query('SELECT 1 FROM consumers.send_message($1, $2)', [chat, body]);
	await sleep(pace);
}
const deadline = Date.now() + 30000;
while (shown.size < count && Date.now() < deadline) await sleep(20);
await client.end();
socket.close();
const lat = [...sent].filter(([b]) => shown.has(b)).map(([b, t]) => shown.get(b) - t).sort((a, b) => a - b);
const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))].toFixed(1) : 'n/a');
console.log(`p50 ${pct(50)} / p99 ${pct(99)} ms (${lat.length}/${count} shown)`);
