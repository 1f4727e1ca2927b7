// bench/rooms/idle.mjs - SOCKETS idle /ws clients on one daemon (bench/rooms/idle.sh), opened by child processes of
// PER_CHILD sockets each (each child under its open-file limit), every child binding its own loopback source
// address (127.0.0.2, 127.0.0.3, ...) so the sockets are not bounded by one address's ephemeral ports. Prints one
// JSON line: sockets held, connect time, the daemon's RSS before and with them, per socket.
//   node idle.mjs <port> <pid> <sockets> <per child>     (env CHAT_OUTBOXD_JWT_SECRET; NODE_PATH tests/node_modules)
// Each socket is a user of its own in a chat of its own (presence and chat_state of one member each).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (process.argv[2] === '--child') {
	const WebSocket = require('ws');
	const jwt = require('jsonwebtoken');
	const [port, from, count, address] = process.argv.slice(3).map((v, i) => (i === 3 ? v : Number(v)));
	const exp = Math.floor(Date.now() / 1000) + 3600;
	const open = [];
	let failed = 0;
	const one = (i) => new Promise((resolve) => {
		const token = jwt.sign({ sub: `idle-${i}`, chats: [i + 1], exp }, process.env.CHAT_OUTBOXD_JWT_SECRET, { algorithm: 'HS256' });
		const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}`, { perMessageDeflate: false, localAddress: address });
		let done = false;
		const end = (ok) => { if (!done) { done = true; if (ok) open.push(ws); else failed++; resolve(); } };
		ws.on('message', () => end(true)); // the welcome
		ws.on('error', () => end(false));
		ws.on('close', () => end(false));
	});
	for (let i = from; i < from + count; i += 200)
		await Promise.all(Array.from({ length: Math.min(200, from + count - i) }, (_, k) => one(i + k)));
	process.send({ open: open.length, failed });
	process.on('message', () => { for (const ws of open) ws.terminate(); process.exit(0); });
} else {
	const [port, pid, sockets, perChild] = process.argv.slice(2).map(Number);
	const status = (field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
	const metric = async (name) => Number((await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
	const rssBefore = status('VmRSS');
	const start = performance.now();
	const children = [];
	const results = [];
	for (let from = 0, k = 0; from < sockets; from += perChild, k++) {
		const child = fork(new URL(import.meta.url).pathname, ['--child', port, from, Math.min(perChild, sockets - from), `127.0.0.${2 + k}`]);
		children.push(child);
		results.push(new Promise((resolve) => child.once('message', resolve)));
	}
	const counts = await Promise.all(results);
	const connectS = (performance.now() - start) / 1000;
	const open = counts.reduce((n, c) => n + c.open, 0), failed = counts.reduce((n, c) => n + c.failed, 0);
	for (let i = 0; i < 100 && (await metric('chat_outboxd_clients_connected')) < open; i++) await sleep(100);
	await sleep(3000); // the joins' presence and chat_state settle
	const rssAfter = status('VmRSS');
	console.log(JSON.stringify({
		sockets, open, failed, children: children.length, connect_s: Number(connectS.toFixed(1)),
		daemon_clients: await metric('chat_outboxd_clients_connected'),
		rss_before_mb: Number((rssBefore / 1024).toFixed(1)), rss_after_mb: Number((rssAfter / 1024).toFixed(1)),
		rss_per_socket_kb: Number(((rssAfter - rssBefore) / Math.max(1, open)).toFixed(2)), rss_peak_mb: Number((status('VmHWM') / 1024).toFixed(1)),
	}));
	// the clients go first (the daemon is stopped with none left, so its shutdown is not what is timed here)
	await Promise.all(children.map((c) => new Promise((resolve) => { c.once('exit', resolve); c.send('close'); })));
	for (let i = 0; i < 600 && (await metric('chat_outboxd_clients_connected')) > 0; i++) await sleep(100);
}
