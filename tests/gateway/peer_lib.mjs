// tests/gateway/peer_lib.mjs - what the gateway test peers share: the daemon's address (DAEMON_URL,
// from gateway.sh), clients that record what they are shown, SQL through psql. Checks, waits and
// tokens come from the harness and are re-exported, so a peer imports from one place.
import { execFileSync } from 'node:child_process';
import { io } from 'socket.io-client';
import jwt from 'jsonwebtoken';
import { env } from '../harness/check.mjs';
import { SECRET, token } from '../harness/jwt.mjs';
import { openWs } from '../harness/ws_client.mjs';

export { check, finish, sleep, waitFor } from '../harness/check.mjs';
export { token } from '../harness/jwt.mjs';

export const URL = env('DAEMON_URL');
export const PORT = Number(new globalThis.URL(URL).port);

// metric reads one unlabelled sample from /metrics (NaN when it is missing).
export async function metric(name) {
	const text = await (await fetch(`${URL}/metrics`)).text();
	const m = new RegExp(`^${name} (-?\\d+)$`, 'm').exec(text);
	return m ? Number(m[1]) : NaN;
}

export function sql(text) {
	return execFileSync('psql', ['-XAtq', '-v', 'ON_ERROR_STOP=1', process.env.PGURL, '-c', text]).toString().trim();
}

// insertInbox puts messages straight into workers.inbox (what the consumer would write) and
// returns their seqs; sender (a plain string, or null) is each one's sender.
export function insertInbox(chat, bodies, sender = null) {
	const from = sender === null ? 'NULL' : `'${sender}'`;
	const values = bodies.map((b) => `(gen_random_uuid(), ${chat}, '${b.replace(/'/g, "''")}', now(), ${from})`).join(',');
	return sql(`INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender) VALUES ${values} RETURNING seq`)
		.split('\n').map(Number);
}

// sioClient opens a Socket.IO client (to url, by default the suite's daemon) that records every
// `message` event.
export function sioClient(opts = {}, url = URL) {
	const socket = io(url, { reconnection: false, ...opts });
	socket.messages = [];
	socket.errors = [];
	socket.on('message', (m, offset) => socket.messages.push({ ...m, offset }));
	socket.on('connect_error', (e) => socket.errors.push(e));
	return socket;
}

// wsClient opens a plain /ws client (on port, by default the suite's daemon's) that records JSON
// frames and the close code (tests/harness/ws_client.mjs).
export const wsClient = (query = '', headers = {}, port = PORT) => openWs(`ws://127.0.0.1:${port}/ws${query}`, headers);

// chatsClaimCases: [name, token, refusal reason] for a `chats` claim that is absent or not an
// array of integers (docs/client-protocol.md, Tokens).
export const chatsClaimCases = [
	['absent', jwt.sign({ sub: 'test', exp: Math.floor(Date.now() / 1000) + 3600 }, SECRET), 'chats missing'],
	['"1"', token('1'), 'bad chats'],
	['"[1]"', token('[1]'), 'bad chats'],
	['1', token(1), 'bad chats'],
	['null', token(null), 'bad chats'],
	['{}', token({}), 'bad chats'],
	['["1"]', token(['1']), 'bad chats'],
];

export const messagesOf = (ws) => ws.frames.filter((f) => f.type === 'message').map((f) => f.message);
