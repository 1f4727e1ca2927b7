// bench/web/measure.mjs - the web chat's figures; run through bench/web/run.sh (see there).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { receivingDaemon, postgres, env, sleep, waitUntil } from '../../tests/faults/procs.mjs';
import { token } from '../../tests/harness/jwt.mjs';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const puppeteer = require('puppeteer-core');
const { io } = require('socket.io-client');

const CHAT = 42, DEEP = 77;
const web = ['--web-root', env('WEB_ROOT')];
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')), extra: web });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')), extra: web });

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]; };
const fmt = (xs) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const url = (daemon, sub, name, side, other, chat = CHAT) =>
	`http://127.0.0.1:${daemon.port}/#${new URLSearchParams({ token: token([chat], { sub, name, ttlSeconds: 3600 }), side, other })}`;

const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
try {
	await Promise.all([workers.start(), consumers.start()]);
	const open = async (daemon, sub, name, side, other, chat) => {
		const ctx = await browser.createBrowserContext();
		const page = await ctx.newPage();
		await page.setViewport({ width: 760, height: 800 });
		await page.goto(url(daemon, sub, name, side, other, chat));
		await page.waitForFunction(() => document.querySelector('#conn').dataset.state === 'connected', { timeout: 20000 });
		return page;
	};

	// ---- 1. send -> shown in the other page
	const wp = await open(workers, 'wanda', 'Wanda', 'Workers', 'Consumers');
	const cp = await open(consumers, 'carl', 'Carl', 'Consumers', 'Workers');
	await cp.evaluate(() => {
		window.arrived = {};
		new MutationObserver(() => {
			for (const li of document.querySelectorAll('#messages > li.theirs'))
				window.arrived[li.querySelector('.body').textContent] ??= performance.timeOrigin + performance.now();
		}).observe(document.querySelector('#messages'), { childList: true, subtree: true });
	});
	await wp.evaluate(() => {
		window.shownAt = {};
		new MutationObserver(() => {
			for (const li of document.querySelectorAll('#messages > li.mine[data-state="shown"]'))
				window.shownAt[li.querySelector('.body').textContent] ??= performance.timeOrigin + performance.now();
		}).observe(document.querySelector('#messages'), { attributes: true, subtree: true, childList: true });
	});
	const sentAt = {};
	for (let i = 0; i < 100; i++) {
		const body = `bench ${i}`;
		sentAt[body] = await wp.evaluate((b) => {
			document.querySelector('#body').value = b;
			const t = performance.timeOrigin + performance.now();
			document.querySelector('#send').requestSubmit();
			return t;
		}, body);
		await sleep(250);
	}
	await waitUntil('all 100 in Consumers\' page', async () => Object.keys(await cp.evaluate(() => window.arrived)).filter((b) => b.startsWith('bench ')).length === 100, 60000);
	await waitUntil('all 100 shown in Workers\' page', async () => Object.keys(await wp.evaluate(() => window.shownAt)).filter((b) => b.startsWith('bench ')).length === 100, 60000);
	const arrived = await cp.evaluate(() => window.arrived), shownAt = await wp.evaluate(() => window.shownAt);
	const toOther = Object.keys(sentAt).map((b) => arrived[b] - sentAt[b]);
	const toShown = Object.keys(sentAt).map((b) => shownAt[b] - sentAt[b]);
	console.log(`send -> shown in the other page: ${fmt(toOther)}`);
	console.log(`send -> "shown" state in the sender's page: ${fmt(toShown)}`);
	await wp.browserContext().close();
	await cp.browserContext().close();

	// ---- 2. history 10,000 messages back
	for (let b = 0; b < 50; b++) {
		await postgres.query(`SELECT consumers.send_message(${DEEP}, 'deep c' || g) FROM generate_series(${b * 100 + 1}, ${b * 100 + 100}) g`);
		await postgres.query(`SELECT workers.send_message(${DEEP}, 'deep w' || g) FROM generate_series(${b * 100 + 1}, ${b * 100 + 100}) g`);
	}
	await waitUntil('5,000 in workers.inbox', async () => (await postgres.query(`SELECT count(*)::int AS n FROM workers.inbox WHERE chat_id = ${DEEP}`)).at(0).n === 5000, 120000);
	const s = io(`http://127.0.0.1:${workers.port}`, { auth: { token: token([DEEP], { sub: 'pager' }) }, transports: ['websocket'] });
	await waitUntil('pager connected', () => s.connected, 10000, 10);
	const perPage = [];
	let next = null, total = 0, got = 0;
	const t0 = performance.now();
	let limited = 0;
	for (;;) {
		const t = performance.now();
		const ack = await s.timeout(10000).emitWithAck('history', { chat_id: DEEP, limit: 50, before_seq: next?.before_seq ?? null, before_sent: next?.before_sent ?? null });
		if (!ack.ok && ack.error.code === 'rate_limited') {
			limited++;
			await sleep(ack.error.retry_after_ms);
			continue;
		}
		if (!ack.ok) throw new Error(JSON.stringify(ack.error));
		perPage.push(performance.now() - t);
		got += ack.messages.length;
		next = ack.next;
		if (!ack.more) break;
	}
	total = performance.now() - t0;
	console.log(`history, socket.io-client, 10,000 messages in pages of 50: ${got} messages, ${perPage.length} pages, per page ${fmt(perPage)}; the last 10 pages (9,500-10,000 back): ${fmt(perPage.slice(-10))}; all ${total.toFixed(0)} ms, with ${limited} waits for the rate limit (20 a second after a burst of 40)`);
	s.close();
	const hp = await open(workers, 'reader', 'Reader', 'Workers', 'Consumers', DEEP);
	await hp.waitForFunction(() => Number(document.body.dataset.historyPages || 0) >= 1, { timeout: 20000 });
	const m0 = await hp.metrics();
	const tb = performance.now();
	let scrolls = 0;
	for (;;) {
		scrolls++;
		const state = await hp.$eval('#older', (e) => e.dataset.state);
		if (state === 'start') break;
		await hp.$eval('#scroller', (m) => { m.scrollTop = 0; m.dispatchEvent(new Event('scroll')); });
		await sleep(5);
	}
	const shownCount = await hp.$$eval('#messages > li', (l) => l.length);
	const m1 = await hp.metrics();
	const d = (k) => ((m1[k] - m0[k]) * 1000).toFixed(0);
	console.log(`history, the page scrolled to its top until the beginning: ${shownCount} messages, ${await hp.evaluate(() => document.body.dataset.historyPages)} pages in ${(performance.now() - tb).toFixed(0)} ms (${scrolls} scrolls; the page's main thread: script ${d('ScriptDuration')} ms, layout ${d('LayoutDuration')} ms, style ${d('RecalcStyleDuration')} ms, tasks ${d('TaskDuration')} ms)`);
	await hp.browserContext().close();

	// ---- 3. memory per connected client (pages first: memory the 1,000 clients freed would hide theirs)
	await sleep(1000);
	const base = rssKb(workers.proc.pid);
	const pages = [];
	for (let i = 0; i < 20; i++) pages.push(await open(workers, `page-${i}`, `Page ${i}`, 'Workers', 'Consumers', 3000 + i));
	await sleep(2000);
	const withPages = rssKb(workers.proc.pid);
	console.log(`memory: 20 Chromium pages, a chat each: RSS ${base} -> ${withPages} kB, ${((withPages - base) / 20).toFixed(1)} kB per page`);
	for (const p of pages) await p.browserContext().close();
	await sleep(3000);
	const before = rssKb(workers.proc.pid);
	const clients = [];
	for (let i = 0; i < 1000; i++) {
		// Each in a chat of its own (a 1:1 conversation): its subscription, presence set and chat_state are its own.
		const c = io(`http://127.0.0.1:${workers.port}`, { auth: { token: token([1000 + i], { sub: `user-${i}`, name: `User ${i}` }) }, transports: ['websocket'] });
		c.chat = 1000 + i;
		c.states = 0;
		c.on('chat_state', () => c.states++);
		clients.push(c);
		if (i % 50 === 49) await waitUntil('connected', () => clients.every((x) => x.connected), 30000, 20);
	}
	await waitUntil('chat_state for all', () => clients.every((c) => c.states >= 1), 60000, 50);
	await Promise.all(clients.map((c) => c.timeout(30000).emitWithAck('history', { chat_id: c.chat, limit: 50 })));
	await sleep(2000);
	const after = rssKb(workers.proc.pid);
	console.log(`memory: 1,000 socket.io-clients as a page (sub, a chat each, chat_state, presence, one history page): RSS ${before} -> ${after} kB, ${((after - before) / 1000).toFixed(1)} kB per client`);
	for (const c of clients) c.close();
} finally {
	await browser.close().catch(() => {});
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
