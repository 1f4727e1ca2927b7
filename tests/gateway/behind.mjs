// tests/gateway/behind.mjs - a live /ws client that stops reading while 300 messages of 60 KB arrive
// (18 MB: more than the loopback socket buffers and --client-queue-bytes, 1 MiB here, see
// memory_bounds.sh) falls behind instead of filling the daemon's memory: the messages past its budget
// are not queued, and once it reads again it gets them from the inbox, every one once, in order,
// without a reconnect.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { PORT, check, finish, metric, sql, token, waitFor } from './peer_lib.mjs';

const N = 300;
const MiB = 1024 * 1024;
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${process.env.DAEMON_PID}/status`, 'utf8'))[1]) * 1024;

const ws = new WebSocket(`ws://127.0.0.1:${PORT}/ws?token=${token([33])}`);
const got = [];
let closed = null, welcome = null;
ws.on('message', (d) => { const f = JSON.parse(d.toString()); if (f.type === 'message') got.push({ seq: f.message.seq, body: f.message.body.slice(0, 12), len: f.message.body.length }); else welcome = f; });
ws.on('close', (code, reason) => { closed = { code, reason: reason.toString() }; });
ws.on('error', () => {});
await waitFor('welcome', () => welcome);
ws._socket.pause();

// The daemon needs memory to consume and store 100-job batches of 60 KB messages whoever reads them
// (printed for comparison: the same messages to a chat nobody is in, then to the client that does not
// read). What the gateway holds for the client is asserted through buffered_bytes_max: RSS also moves
// with how the consumer's batches fall and how malloc reuses its heap.
let peak = rss();
let sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 20);
sql(`SELECT count(consumers.send_message(34, lpad(i::text, 6, '0') || repeat('x', 59994))) FROM generate_series(1, ${N}) i`);
await waitFor('all in the inbox', () => sql(`SELECT count(*) FROM workers.inbox WHERE chat_id = 34`) === String(N), 60000);
clearInterval(sampler);
const base = peak;
let bufferedMax = 0;
sampler = setInterval(async () => {
	peak = Math.max(peak, rss());
	bufferedMax = Math.max(bufferedMax, await metric('chat_outboxd_gateway_buffered_bytes_max'));
}, 20);
const behindBefore = await metric('chat_outboxd_gateway_fell_behind_total');
sql(`SELECT count(consumers.send_message(33, lpad(i::text, 6, '0') || repeat('x', 59994))) FROM generate_series(1, ${N}) i`);
check('the client that stopped reading falls behind', await waitFor('fell behind', async () => await metric('chat_outboxd_gateway_fell_behind_total') > behindBefore, 60000));
// every message is in the inbox by now (the consumer delivers after its commit)
await waitFor('all in the inbox', () => sql(`SELECT count(*) FROM workers.inbox WHERE chat_id = 33`) === String(N), 60000);
clearInterval(sampler);
console.log(`   RSS: peak ${(base / MiB).toFixed(1)} MiB relaying 300 x 60 KB to nobody, ${(peak / MiB).toFixed(1)} MiB relaying them to a client that does not read`);
check('what waits for it in the daemon stays within --client-queue-bytes (1 MiB)', bufferedMax > 0 && bufferedMax <= MiB,
	`at most ${bufferedMax} bytes`);

ws._socket.resume();
await waitFor('everything', () => got.length >= N, 60000);
const expected = Array.from({ length: N }, (_, i) => String(i + 1).padStart(6, '0') + 'xxxxxx');
check(`after reading again it has all ${N} messages, once, in order, whole`,
	got.length === N && got.every((m, i) => m.body === expected[i] && m.len === 60000 && (i === 0 || m.seq > got[i - 1].seq)),
	`${got.length} messages`);
check('and it was never disconnected', closed === null, JSON.stringify(closed));
ws.close();
finish();
