// tests/gateway/peer_lib.mjs - helpers shared by the gateway test peers: tokens, clients, waiting,
// SQL through psql, and a tiny assertion tally that sets the exit code.
import { execFileSync } from 'node:child_process';
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { signToken } from '../lib/jwt.mjs';

export const PORT = Number(process.env.GW_PORT);
export const SECRET = process.env.GW_SECRET;
export const URL = `http://127.0.0.1:${PORT}`;

export const token = (chats, extra = {}) => signToken({ chats, ...extra }, SECRET);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let failures = 0;
export function check(name, ok, detail = '') {
	console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ' -- ' + detail : ''}`);
	if (!ok) failures++;
}
export function finish() {
	console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
	process.exit(failures ? 1 : 0);
}

export async function waitFor(what, cond, ms = 10000) {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		if (await cond()) return true;
		await sleep(20);
	}
	console.log(`   (timed out waiting for ${what})`);
	return false;
}

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
// returns their seqs.
export function insertInbox(chat, bodies) {
	const values = bodies.map((b) => `(gen_random_uuid(), ${chat}, '${b.replace(/'/g, "''")}', now())`).join(',');
	return sql(`INSERT INTO workers.inbox (message_id, chat_id, body, created_at) VALUES ${values} RETURNING seq`)
		.split('\n').map(Number);
}

// sioClient opens a Socket.IO client that records every `message` event.
export function sioClient(opts = {}) {
	const socket = io(URL, { reconnection: false, ...opts });
	socket.messages = [];
	socket.errors = [];
	socket.on('message', (m, offset) => socket.messages.push({ ...m, offset }));
	socket.on('connect_error', (e) => socket.errors.push(e));
	return socket;
}

// wsClient opens a plain /ws client that records JSON frames and the close code.
export function wsClient(query = '', headers = {}) {
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/ws${query}`, { headers });
	ws.frames = [];
	ws.closed = null;
	ws.on('message', (data) => ws.frames.push(JSON.parse(data.toString())));
	ws.on('close', (code, reason) => { ws.closed = { code, reason: reason.toString() }; });
	ws.on('error', () => {});
	return ws;
}

export const messagesOf = (ws) => ws.frames.filter((f) => f.type === 'message').map((f) => f.message);
