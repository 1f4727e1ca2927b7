// bench/membership/connect.mjs - connects SOCKETS /ws clients, each a user of its own, to one daemon
// and reports how long until every welcome arrived, per-socket connect times and the daemon's RSS
// (run by bench/membership/run.sh, once per --authz mode, in the same run).
//   node connect.mjs <port> <pid> <token|membership> <sockets> <batch>
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// the tests' packages (tests/node_modules: npm ci in tests/)
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const WebSocket = require('ws');
const jwt = require('jsonwebtoken');
const [port, pid, mode, sockets, batch] = process.argv.slice(2);
const N = Number(sockets), B = Number(batch);
const SECRET = process.env.CHAT_OUTBOXD_JWT_SECRET;
const CHATS = [1, 2, 3, 4, 5];
const exp = Math.floor(Date.now() / 1000) + 3600;
// the same chats either way: in the token (token mode), or in chat_outbox.members (membership mode)
const tokenOf = (i) => jwt.sign(mode === 'token' ? { sub: `user-${i}`, chats: CHATS, exp } : { sub: `user-${i}`, exp }, SECRET,
	{ algorithm: 'HS256' });
const rssKb = () => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
const tokens = Array.from({ length: N }, (_, i) => tokenOf(i));

const open = [];
const times = [];
const connectOne = (i) => new Promise((resolve, reject) => {
	const t0 = performance.now();
	const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${tokens[i]}`, { perMessageDeflate: false });
	const timer = setTimeout(() => reject(new Error('connect timeout')), 60000);
	ws.on('error', reject);
	ws.on('close', (code, reason) => reject(new Error(`closed ${code} ${reason}`)));
	ws.once('message', (data) => {
		clearTimeout(timer);
		const f = JSON.parse(data.toString());
		if (f.type !== 'welcome' || f.chats.length !== CHATS.length) return reject(new Error(`not welcomed: ${data}`));
		times.push(performance.now() - t0);
		open.push(ws);
		resolve();
	});
});

const rssBefore = rssKb();
const start = performance.now();
for (let i = 0; i < N; i += B)
	await Promise.all(Array.from({ length: Math.min(B, N - i) }, (_, k) => connectOne(i + k)));
const seconds = (performance.now() - start) / 1000;
await new Promise((r) => setTimeout(r, 500));
const rssAfter = rssKb();
times.sort((a, b) => a - b);
const pct = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
console.log(JSON.stringify({ mode, sockets: N, batch: B, seconds: Number(seconds.toFixed(2)), per_second: Math.round(N / seconds),
	p50_ms: Number(pct(0.5)), p99_ms: Number(pct(0.99)), max_ms: Number(times[times.length - 1].toFixed(1)),
	rss_before_mb: Math.round(rssBefore / 1024), rss_after_mb: Math.round(rssAfter / 1024),
	rss_per_socket_kb: Number(((rssAfter - rssBefore) / N).toFixed(2)) }));
for (const ws of open) ws.terminate();
