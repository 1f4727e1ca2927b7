// tests/gateway/too_slow.mjs - a /ws client that keeps sending requests and never reads the answers
// (pings whose 60 KB refs come back in each pong) is closed with 1008 "too slow" once the answers
// waiting for it pass --client-queue-bytes (1 MiB here, see memory_bounds.sh) + 256 KiB; what waited for
// it is freed, and a client in the same chat keeps getting its messages.
import WebSocket from 'ws';
import { PORT, check, finish, messagesOf, metric, sql, token, waitFor, wsClient } from './peer_lib.mjs';

const before = await metric('chat_outboxd_gateway_clients_too_slow_total');
const other = wsClient(`?token=${token([35])}`);
await waitFor('other welcome', () => other.frames.length > 0);

const ws = new WebSocket(`ws://127.0.0.1:${PORT}/ws?token=${token([35])}`);
let closed = null;
ws.on('close', (code, reason) => { closed = { code, reason: reason.toString() }; });
ws.on('error', () => {});
await new Promise((r) => ws.once('message', r)); // the welcome
ws._socket.pause();
const ref = 'r'.repeat(60000);
let sent = 0;
// 300 x 60 KB of pongs: more than the socket buffers and the queue's limit together.
while (sent < 300 && !(await metric('chat_outboxd_gateway_clients_too_slow_total') > before)) {
	for (let i = 0; i < 20; i++, sent++) ws.send(JSON.stringify({ type: 'ping', ref: `${sent}-${ref}` }));
	await new Promise((r) => setTimeout(r, 20));
}
check('a client that does not read its answers is closed too slow', await waitFor('too slow',
	async () => await metric('chat_outboxd_gateway_clients_too_slow_total') > before, 20000), `${sent} pings sent`);
check('what waited for it is freed', await metric('chat_outboxd_gateway_buffered_bytes_max') < 1024 * 1024,
	String(await metric('chat_outboxd_gateway_buffered_bytes_max')));
ws._socket.resume();
await waitFor('the close', () => closed, 20000);
check('it sees close 1008 "too slow"', closed?.code === 1008 && closed.reason === 'too slow', JSON.stringify(closed));
sql(`SELECT consumers.send_message(35, 'still-here')`);
check('a client in the same chat keeps getting its messages',
	await waitFor('other gets it', () => messagesOf(other).some((m) => m.body === 'still-here'), 20000));
other.close();
finish();
