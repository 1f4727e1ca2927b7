// tests/gateway/memory_bounds.mjs - see memory_bounds.sh. Reads the daemon's VmRSS from
// /proc/$DAEMON_PID/status while misbehaving peers run, and checks a normal client's live messages.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { PORT, URL, check, finish, metric, sioClient, sleep, sql, token, waitFor } from './peer_lib.mjs';

const MiB = 1024 * 1024;
// The documented defaults (docs/client-protocol.md, "Memory bounds").
const CLIENT_QUEUE = 4 * MiB, PAGE = 1 * MiB;
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${process.env.DAEMON_PID}/status`, 'utf8'))[1]) * 1024;

const base = rss();
let peak = base;
const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 50);

// A normal client in chat 5, connected before the trouble starts.
const normal = sioClient({ transports: ['websocket'], auth: { token: token([5]) } });
await waitFor('normal client connects', () => normal.connected);

// Clients that resume from seq 0 and never read: /ws with a paused socket, Socket.IO over a
// WebSocket with a paused socket, and Socket.IO polling that joins the namespace and never polls.
const slow = [];
for (let i = 0; i < 4; i++) {
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/ws?token=${token([5])}&since=0`);
	ws.on('error', () => {});
	ws.on('open', () => ws._socket.pause());
	slow.push(ws);
}
{
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/socket.io/?EIO=4&transport=websocket`);
	ws.on('error', () => {});
	ws.once('message', () => { ws.send('40' + JSON.stringify({ token: token([5]), since: 0 })); ws._socket.pause(); });
	slow.push(ws);
}
const request = (path, body, localAddress) => new Promise((resolve) => {
	const headers = body === null ? {} : { 'Content-Type': 'text/plain;charset=UTF-8', 'Content-Length': Buffer.byteLength(body) };
	const req = http.request(`${URL}${path}`, { method: body === null ? 'GET' : 'POST', headers, localAddress, agent: false }, (res) => {
		let data = '';
		res.on('data', (d) => { data += d; });
		res.on('end', () => resolve({ status: res.statusCode, data }));
	});
	req.on('error', (e) => resolve({ status: 0, data: String(e) }));
	if (body !== null) req.write(body);
	req.end();
});
{
	const hs = await request('/socket.io/?EIO=4&transport=polling', null);
	const sid = JSON.parse(hs.data.slice(1)).sid;
	const r = await request(`/socket.io/?EIO=4&transport=polling&sid=${sid}`, '40' + JSON.stringify({ token: token([5]), since: 0 }));
	check('a polling client joins and then never polls', r.status === 200, JSON.stringify(r));
}
const slowClients = slow.length + 1;

// 5,000 Engine.IO handshakes from another address (127.0.0.2) that never authenticate.
const statuses = {};
for (let i = 0; i < 5000; i += 50) {
	const batch = await Promise.all(Array.from({ length: 50 }, () => request('/socket.io/?EIO=4&transport=polling', null, '127.0.0.2')));
	for (const r of batch) statuses[r.status] = (statuses[r.status] || 0) + 1;
}
console.log(`   handshakes: ${JSON.stringify(statuses)}`);
check('unauthenticated handshakes from one address are capped (the rest get 429)',
	(statuses[200] || 0) <= 256 && (statuses[429] || 0) >= 5000 - 256, JSON.stringify(statuses));
const sessions = await metric('chat_outboxd_gateway_engine_sessions');
check('open Engine.IO sessions stay under the cap', sessions <= 256 + 10, String(sessions));
// Another address is not locked out by them.
const other = sioClient({ transports: ['polling'], auth: { token: token([5]) } });
check('a client from another address still connects', await waitFor('other connects', () => other.connected, 10000));
other.close();

// A client that sends as fast as it can.
const sender = sioClient({ transports: ['websocket'], auth: { token: token([6]) } });
await waitFor('sender connects', () => sender.connected);
const acks = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
	sender.timeout(30000).emitWithAck('send', { chat_id: 6, body: `flood-${i}` }).catch((e) => ({ timeout: String(e) }))));
const limited = acks.filter((a) => a.ok === false && a.error?.code === 'rate_limited').length;
const stored = acks.filter((a) => a.ok === true).length;
console.log(`   flood: ${stored} stored, ${limited} rate_limited, ${acks.length - stored - limited} other`);
check('a flooding client gets rate_limited acks', limited > 0 && stored > 0 && stored + limited === acks.length,
	JSON.stringify(acks.find((a) => a.ok !== true)));
sender.close();

// Live messages to the normal client while the slow clients sit on their backlog.
const started = Date.now();
const lat = [];
for (let i = 0; i < 20; i++) {
	const t0 = Date.now();
	sql(`SELECT consumers.send_message(5, 'live-${i}')`);
	await waitFor(`live-${i}`, () => normal.messages.length > i, 30000);
	lat.push(Date.now() - t0);
}
await sleep(300);
const bodies = normal.messages.map((m) => m.body);
check('the normal client got every live message once, in order',
	JSON.stringify(bodies) === JSON.stringify(Array.from({ length: 20 }, (_, i) => `live-${i}`)), bodies.join());
lat.sort((a, b) => a - b);
console.log(`   normal client latency (send_message to receipt): p50 ${lat[10]} ms, max ${lat[19]} ms (${Date.now() - started} ms)`);

// Let every slow client's catch-up run as far as it will.
await sleep(3000);
peak = Math.max(peak, rss());
clearInterval(sampler);
const bound = slowClients * (CLIENT_QUEUE + 2 * PAGE) + 48 * MiB;
console.log(`   RSS: base ${(base / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, growth ${((peak - base) / MiB).toFixed(1)} MiB, bound ${(bound / MiB).toFixed(1)} MiB`);
check(`daemon RSS growth stays under ${slowClients} x (client queue + 2 catch-up pages) + 48 MiB`, peak - base <= bound);

const bufferedMax = await metric('chat_outboxd_gateway_buffered_bytes_max');
check('what waits for any one client stays within --client-queue-bytes', bufferedMax <= CLIENT_QUEUE, `${bufferedMax} bytes`);
const replayed = await metric('chat_outboxd_gateway_catchup_messages_total');
check('the replays of clients that do not read wait for them (not all 3,000 rows loaded each)',
	replayed < slowClients * 3000, `${replayed} replayed`);

for (const ws of slow) ws.terminate();

// A client that reads gets the whole replay, page after page of about --catchup-page-bytes:
// every one of the 3,000 rows once, in seq order, then live messages.
{
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/ws?token=${token([5])}&since=0`);
	const got = [];
	ws.on('message', (d) => { const f = JSON.parse(d.toString()); if (f.type === 'message') got.push({ seq: f.message.seq, len: f.message.body.length, body: f.message.body.slice(0, 8) }); });
	ws.on('error', () => {});
	await waitFor('the whole replay', () => got.length >= 3000 + 20, 60000);
	const bigs = got.filter((m) => m.len === 60000).length;
	const increasing = got.every((m, i) => i === 0 || m.seq > got[i - 1].seq);
	check('a reading client resuming from 0 gets all 3,000 rows and the 20 live ones, once, in order',
		got.length === 3020 && bigs === 3000 && increasing && got.slice(3000).map((m) => m.body).join() ===
		Array.from({ length: 20 }, (_, i) => `live-${i}`.slice(0, 8)).join(), `${got.length} messages, ${bigs} of 60,000 bytes`);
	ws.close();
}
// The same over Socket.IO long-polling: held GETs carry at most 1 MiB each, the client polls again.
{
	const s = sioClient({ transports: ['polling'], auth: { token: token([5]), since: 0 } });
	const got = [];
	s.off('message');
	s.on('message', (m) => got.push({ seq: m.seq, len: m.body.length }));
	await waitFor('the whole replay over polling', () => got.length >= 3020, 60000);
	check('a polling client resuming from 0 gets all 3,020 messages once, in order',
		got.length === 3020 && got.slice(0, 3000).every((m) => m.len === 60000) && got.every((m, i) => i === 0 || m.seq > got[i - 1].seq),
		`${got.length} messages`);
	s.close();
}
normal.close();
finish();
