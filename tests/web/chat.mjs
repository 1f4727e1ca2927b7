// tests/web/chat.mjs - the web client in headless Chromium (puppeteer-core), one browser context per
// side: Workers' page on the workers daemon, Consumers' page on the consumers daemon, each watching
// the other side's gateway as its peer. Checks what a person relies on:
//  - history on open: a message sent before the pages opened is shown (catch-up from seq 0);
//  - a message typed in one page appears in the other, and in the sender's own view as
//    sending -> sent -> shown;
//  - the workers daemon is SIGKILLed: its page shows "reconnecting"; messages sent (SQL send_message)
//    while it is down all appear once, in order, after the restart, and the page shows "back";
//    a message typed while disconnected fails at once and its retry succeeds after the restart.
// Screenshots go to $H_DIR. Run through tests/web/chat.sh.
import puppeteer from 'puppeteer-core';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { waitUntil as waitFor } from '../harness/check.mjs';
import { token as signFor } from '../harness/jwt.mjs';

const CHAT = 42;
const DEADLINE_MS = 20000;
const H_DIR = env('H_DIR');
// Each page also watches the other side's daemon (its `peer`), a cross-origin connection: each daemon
// allows the other's origin with --cors-origins, as a deployment of the two would.
const origin = (port) => `http://127.0.0.1:${port}`;
const web = (peerPort) => ['--web-root', env('WEB_ROOT'), '--cors-origins', origin(peerPort)];
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')),
	extra: web(env('CONSUMERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')),
	extra: web(env('WORKERS_PORT')) });

function check(cond, what) {
	if (!cond) throw new Error(`FAIL: ${what}`);
	console.log(`ok: ${what}`);
}

function pageUrl(own, peer, sub, name, side, other) {
	const token = signFor([CHAT], { sub, ttlSeconds: 600, name });
	const hash = new URLSearchParams({ token, side, other, peer: `http://127.0.0.1:${peer.port}` });
	return `http://127.0.0.1:${own.port}/#${hash}`;
}

// What a page shows, read from the DOM.
const shown = (page) => page.$$eval('#messages > li', (lis) => lis.map((li) => ({
	body: li.querySelector('.body').textContent, mine: li.classList.contains('mine'), id: li.dataset.id,
	seq: li.dataset.seq, state: li.dataset.state, states: li.dataset.states })));

const waitDom = (page, what, fn, ...args) =>
	page.waitForFunction(fn, { timeout: DEADLINE_MS, polling: 50 }, ...args).then(() => console.log(`ok: ${what}`),
		(e) => { throw new Error(`FAIL: ${what}: ${e.message}`); });

const connState = (page, sel, state) => waitDom(page, `${sel} is ${state}`,
	(s, st) => document.querySelector(s)?.dataset.state === st, sel, state);

const hasBody = (page, what, body, mine) => waitDom(page, what,
	(b, m) => [...document.querySelectorAll('#messages > li')].some((li) =>
		li.querySelector('.body').textContent === b && li.classList.contains('mine') === m), body, mine);

async function typeAndSend(page, body) {
	await page.type('#body', body);
	await page.keyboard.press('Enter');
}

const browser = await puppeteer.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
	await Promise.all([workers.start(), consumers.start()]);
	// History: sent before anyone opened the chat, in Workers' inbox once the relay moved it.
	await postgres.query('SELECT consumers.send_message($1, $2)', [CHAT, 'history: sent before the pages opened']);
	await waitFor('the history message in workers.inbox',
		async () => (await postgres.query('SELECT count(*)::int AS n FROM workers.inbox')).at(0).n === 1, DEADLINE_MS);

	const pages = {};
	const pageErrors = []; // uncaught script errors and CSP violations: the page must have none
	for (const [side, own, peer, other] of [['Workers', workers, consumers, 'Consumers'], ['Consumers', consumers, workers, 'Workers']]) {
		const ctx = await browser.createBrowserContext();
		const page = await ctx.newPage();
		await page.setViewport({ width: 760, height: 800 });
		page.on('pageerror', (e) => pageErrors.push(`[${side}] ${e.message}`));
		page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) pageErrors.push(`[${side}] ${m.text()}`); });
		await page.goto(pageUrl(own, peer, `${side.toLowerCase()}-user`, side === 'Workers' ? 'Wanda (Workers)' : 'Carl Öberg (Consumers)', side, other));
		pages[side] = page;
	}
	const { Workers: wp, Consumers: cp } = pages;
	for (const p of [wp, cp]) {
		await connState(p, '#conn', 'connected');
		await connState(p, '#peer-conn', 'connected');
	}
	// Loaded from the server, not a file: the served type is right and the library came from our folder.
	check(await wp.evaluate(() => typeof io === 'function' && document.contentType === 'text/html'), 'index.html and socket.io.min.js served by the daemon');

	check(await wp.$eval('#user', (e) => e.textContent) === 'Wanda (Workers) · Workers' &&
		await cp.$eval('#user', (e) => e.textContent) === 'Carl Öberg (Consumers) · Consumers', 'each page shows its user\'s name claim and side');
	await hasBody(wp, 'history shown on open in Workers\' page (catch-up)', 'history: sent before the pages opened', false);
	await hasBody(cp, 'history of its own side shown in Consumers\' page (peer catch-up)', 'history: sent before the pages opened', true);

	// A message typed in Workers' page.
	await typeAndSend(wp, 'Hi Carl, the order is packed.');
	await hasBody(cp, 'Workers\' message appears in Consumers\' page', 'Hi Carl, the order is packed.', false);
	await waitDom(wp, 'Workers\' own message goes sending -> sent -> shown',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === 'Hi Carl, the order is packed.' && li.dataset.states === 'sending sent shown'));
	// And the reply from Consumers' page.
	await typeAndSend(cp, 'Thanks Wanda! When does it ship?');
	await hasBody(wp, 'Consumers\' reply appears in Workers\' page', 'Thanks Wanda! When does it ship?', false);
	await waitDom(cp, 'Consumers\' own message goes sending -> sent -> shown',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === 'Thanks Wanda! When does it ship?' && li.dataset.states === 'sending sent shown'));
	// A refused send shows the error and a retry button, and stores nothing.
	await wp.$eval('#body', (e) => { e.value = 'x'.repeat(70000); });
	await wp.keyboard.press('Enter');
	await waitDom(wp, 'an over-long message fails with the database error and offers a retry',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) => li.dataset.state === 'failed' &&
			/body is too long/.test(li.querySelector('.state').textContent) && li.querySelector('button.retry')));
	await wp.evaluate(() => [...document.querySelectorAll('#messages > li.mine')].find((li) => li.dataset.state === 'failed').remove());
	await wp.screenshot({ path: `${H_DIR}/workers-conversation.png` });
	await cp.screenshot({ path: `${H_DIR}/consumers-conversation.png` });

	// The workers daemon dies; its page must notice, and get everything sent meanwhile once it is back.
	await wp.evaluate(() => { window.sameDocument = true; });
	const killed = await workers.stop('SIGKILL');
	check(killed.signal === 'SIGKILL', 'workers daemon killed with SIGKILL');
	await connState(wp, '#conn', 'reconnecting');
	await connState(cp, '#peer-conn', 'reconnecting');
	// Typed while disconnected: fails at once (nothing is queued to be sent twice later), retried below.
	await typeAndSend(wp, 'Are you still there?');
	await waitDom(wp, 'a message typed while disconnected fails with "not connected" and a retry button',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) => li.dataset.state === 'failed' &&
			/not connected/.test(li.querySelector('.state').textContent) && li.querySelector('button.retry')));
	const whileDown = Array.from({ length: 5 }, (_, i) => `sent while Workers' daemon was down #${i + 1}`);
	for (const body of whileDown) await postgres.query('SELECT consumers.send_message($1, $2)', [CHAT, body]);
	await wp.screenshot({ path: `${H_DIR}/workers-reconnecting.png` });
	await workers.start();
	await connState(wp, '#conn', 'back');
	await waitDom(wp, 'every message sent while down appears in Workers\' page',
		(bodies) => bodies.every((b) => [...document.querySelectorAll('#messages > li.theirs .body')].some((e) => e.textContent === b)), whileDown);
	await waitDom(cp, 'and in Consumers\' page as shown (peer gateway back)',
		(bodies) => bodies.every((b) => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === b && li.dataset.state === 'shown')), whileDown);
	await connState(cp, '#peer-conn', 'back');
	await wp.click('#messages > li.mine[data-state="failed"] button.retry');
	await waitDom(wp, 'its retry goes sending -> sent -> shown', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Are you still there?' && li.dataset.states === 'sending failed sending sent shown'));
	await hasBody(cp, 'and the retried message appears in Consumers\' page', 'Are you still there?', false);
	check(await wp.evaluate(() => window.sameDocument === true), 'the page was not reloaded');
	// Whether the daemon pushed them live or replayed them from the offset depends on who was first after
	// the restart (its queue consumer or the page's reconnect); both must show each message once.
	console.log(`info: the restarted daemon replayed ${await workers.metric('chat_outboxd_gateway_catchup_messages_total')} messages from the offsets of the two pages' sockets; the rest it pushed live`);

	for (const [side, page] of [['Workers', wp], ['Consumers', cp]]) {
		const list = await shown(page);
		const bodies = list.map((m) => m.body);
		const want = ['history: sent before the pages opened', 'Hi Carl, the order is packed.', 'Thanks Wanda! When does it ship?', ...whileDown, 'Are you still there?'];
		check(JSON.stringify(bodies) === JSON.stringify(want), `${side}' page shows the whole conversation once, in order: ${JSON.stringify(bodies)}`);
		check(await page.evaluate(() => document.body.dataset.duplicates === undefined), `${side}' page received no message twice from a gateway`);
		const inboxSeqs = list.filter((m) => !m.mine).map((m) => Number(m.seq));
		check(inboxSeqs.every((s, i) => i === 0 || s > inboxSeqs[i - 1]), `${side}' page: its inbox's messages in seq order ${inboxSeqs}`);
	}
	// Still usable after the restart: a new message both ways.
	await typeAndSend(wp, 'Ships tomorrow morning.');
	await hasBody(cp, 'a message sent after the restart arrives', 'Ships tomorrow morning.', false);
	await waitDom(wp, 'and reaches shown', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Ships tomorrow morning.' && li.dataset.state === 'shown'));
	check(pageErrors.length === 0, `no script errors or CSP violations in the pages ${JSON.stringify(pageErrors)}`);
	await wp.screenshot({ path: `${H_DIR}/workers-back.png` });
	await cp.screenshot({ path: `${H_DIR}/consumers-back.png` });
	console.log('PASS');
} finally {
	await browser.close().catch(() => {});
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
