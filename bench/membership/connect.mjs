// bench/membership/connect.mjs - connects SOCKETS /ws clients, each a user of its own, to one daemon
// and reports how long until every welcome arrived (and every chat_state of the joins), per-socket
// connect times, the daemon's RSS once that settled and,
// in membership mode, what its membership cache holds (run by bench/membership/run.sh, once per
// --authz mode, in the same run).
//   node connect.mjs <port> <pid> <token|membership> <sockets> <batch> [chat size]
// User i is in 5 chats, shared with the users of its group of <chat size> (default 10):
// chats g*5+1 .. g*5+5 with g = floor(i / chat size), as run.sh fills chat_outbox.members.
//
// A connect that fails before its welcome (a reset, a refusal, a close, no welcome within 60 s) is
// counted by why and tried again after a backoff (100 ms doubling to 2 s, with jitter), at most
// ATTEMPTS times; a socket that fails after its welcome is counted as dropped. Nothing ends the run
// early: the report says how many were welcomed, retried, failed and dropped.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// the tests' packages (tests/node_modules: npm ci in tests/)
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const WebSocket = require('ws');
const jwt = require('jsonwebtoken');
const [port, pid, mode, sockets, batch, chatSize = '10'] = process.argv.slice(2);
const N = Number(sockets), B = Number(batch), G = Number(chatSize);
const ATTEMPTS = 8;
const SECRET = process.env.CHAT_OUTBOXD_JWT_SECRET;
const CHATS_PER_USER = 5;
const chatsOf = (i) => Array.from({ length: CHATS_PER_USER }, (_, k) => Math.floor(i / G) * CHATS_PER_USER + k + 1);
const exp = Math.floor(Date.now() / 1000) + 3600;
// the same chats either way: in the token (token mode), or in chat_outbox.members (membership mode)
const tokenOf = (i) => jwt.sign(mode === 'token' ? { sub: `user-${i}`, chats: chatsOf(i), exp } : { sub: `user-${i}`, exp }, SECRET,
	{ algorithm: 'HS256' });
const procKb = (field) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const rssKb = () => procKb('VmRSS');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const metric = async (name) => {
	const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
	const m = text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
	return m ? Number(m[1]) : null;
};
const tokens = Array.from({ length: N }, (_, i) => tokenOf(i));

const open = [];
const times = [];
const failures = {}; // why a connect attempt failed -> count
let retries = 0, failed = 0, dropped = 0, chatStates = 0;
const count = (why) => { failures[why] = (failures[why] || 0) + 1; };

// attempt: one connect, resolved with the socket once welcomed, rejected with why it was not.
const attempt = (i) => new Promise((resolve, reject) => {
	const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${tokens[i]}`, { perMessageDeflate: false });
	let state = 'connecting'; // -> 'welcomed' (resolved) | 'failed' (rejected) | 'closed by us'
	ws.end = () => {
		state = 'closed by us';
		ws.terminate();
	};
	const fail = (why) => {
		if (state !== 'connecting') return;
		state = 'failed';
		clearTimeout(timer);
		ws.terminate();
		reject(new Error(why));
	};
	const timer = setTimeout(() => fail('no welcome within 60 s'), 60000);
	ws.on('error', (e) => fail(e.code || e.message)); // after the welcome, the close that follows counts it
	ws.on('close', (code) => {
		if (state === 'welcomed') dropped++;
		else fail(`closed ${code}`);
	});
	ws.on('message', (data) => {
		const f = JSON.parse(data.toString());
		if (state === 'welcomed') {
			if (f.type === 'chat_state') chatStates++;
			return;
		}
		if (f.type !== 'welcome' || f.chats.join() !== chatsOf(i).join()) return fail(`not welcomed: ${String(data).slice(0, 80)}`);
		if (state !== 'connecting') return;
		state = 'welcomed';
		clearTimeout(timer);
		resolve(ws);
	});
});

async function connectOne(i) {
	const t0 = performance.now();
	let backoff = 100;
	for (let n = 1; n <= ATTEMPTS; n++) {
		try {
			open.push(await attempt(i));
			times.push(performance.now() - t0);
			return;
		} catch (e) {
			count(e.message);
			if (n === ATTEMPTS) break;
			retries++;
			await sleep(backoff / 2 + Math.random() * backoff / 2);
			backoff = Math.min(backoff * 2, 2000);
		}
	}
	failed++;
}

const rssBefore = rssKb();
const cacheBefore = await metric('chat_outboxd_gateway_membership_cache_bytes');
const readsBefore = await metric('chat_outboxd_gateway_membership_reads_total');
const start = performance.now();
for (let i = 0; i < N; i += B)
	await Promise.all(Array.from({ length: Math.min(B, N - i) }, (_, k) => connectOne(i + k)));
const seconds = (performance.now() - start) / 1000;
// The joins of a welcome go on after it (presence in Redis, chat_state from Postgres): the memory is
// measured once every welcomed socket has its 5 chat_state (or after 120 s, reported as not settled).
const settledBy = performance.now() + 120000;
while (chatStates < open.length * CHATS_PER_USER && performance.now() < settledBy) await sleep(50);
const settledSeconds = (performance.now() - start) / 1000;
await sleep(500);
const rssAfter = rssKb();
const cacheUsers = await metric('chat_outboxd_gateway_membership_cache_users');
const cacheBytes = await metric('chat_outboxd_gateway_membership_cache_bytes');
times.sort((a, b) => a - b);
const pct = (p) => (times.length ? Number(times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1)) : null);
const report = {
	mode, sockets: N, batch: B, chat_size: G, welcomed: open.length, retries, failed, dropped_after_welcome: dropped, failures,
	seconds: Number(seconds.toFixed(2)), per_second: Math.round(open.length / seconds),
	p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: pct(1),
	chat_states: chatStates, settled_seconds: Number(settledSeconds.toFixed(2)),
	rss_before_mb: Math.round(rssBefore / 1024), rss_after_mb: Math.round(rssAfter / 1024),
	rss_per_socket_kb: Number(((rssAfter - rssBefore) / Math.max(1, open.length)).toFixed(2)),
};
if (cacheBytes !== null) {
	// membership mode: the cache's own share of the memory, per user, and whether it empties once all left
	Object.assign(report, { membership_reads: (await metric('chat_outboxd_gateway_membership_reads_total')) - readsBefore, cache_users: cacheUsers, cache_kb: Number((cacheBytes / 1024).toFixed(1)),
		cache_bytes_per_user: Math.round((cacheBytes - (cacheBefore || 0)) / Math.max(1, cacheUsers)) });
}
// the peak RSS so far (VmHWM): RSS is mostly the high-water mark of what the storm allocated at once
report.rss_peak_mb = Math.round(procKb('VmHWM') / 1024);
for (const ws of open) ws.end();
for (let i = 0; i < 300 && (await metric('chat_outboxd_clients_connected')) > 0; i++) await sleep(100);
report.rss_after_close_mb = Math.round(rssKb() / 1024);
report.rss_peak_after_close_mb = Math.round(procKb('VmHWM') / 1024);
if (cacheBytes !== null) report.cache_users_after_close = await metric('chat_outboxd_gateway_membership_cache_users');
console.log(JSON.stringify(report));
