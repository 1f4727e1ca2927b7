// tests/web/chat.mjs - the web client in headless Chromium (puppeteer-core), one browser context per
// side: Workers' page on the workers daemon, Consumers' page on the consumers daemon, each with one
// connection, to its own side's gateway. Checks what a person relies on:
//  - history: 300 messages (150 each way) sent before the pages opened; the newest page shows on
//    open, and scrolling up loads the older ones until the beginning: every one once, in order;
//  - presence shows both users; a second tab of the same user counts once; a closed page drops out;
//  - typing shows on the other page and disappears by itself;
//  - a message typed in one page appears in the other, and in the sender's own view as
//    waiting -> sent -> shown; a read receipt appears on it once the other page has it in view;
//  - the workers daemon is SIGKILLed: its page shows "reconnecting"; messages sent (SQL send_message)
//    while it is down all appear once, in order, after the restart, and the page shows "back";
//    a message typed while disconnected waits, with no Retry, and is sent by itself after the restart;
//  - a message typed while the daemon is down, the page reloaded right after it is back: the message
//    waited across the reload (localStorage) and is stored once, shown once;
//  - the daemon killed between the commit and the ack: its Postgres answers held back by a proxy, the
//    message committed, the daemon SIGKILLed, started again: the page sends it again by itself, and it
//    is stored once and shown once;
//  - the network gone (a proxy holding everything both ways, closing nothing), a message written, the
//    network back and the page reloaded at once: stored once, shown once;
//  - edits and deletes: only one's own messages have Edit and Delete; an edit and a delete made
//    in Workers' page show as "edited" / "deleted" in both pages live, and after a reload.
// Screenshots go to $H_DIR. Run through tests/web/chat.sh.
import net from 'node:net';
import { launchBrowser, check, waitDom, DEADLINE_MS } from './page.mjs';
import { receivingDaemon, postgres, env, sleep } from '../faults/procs.mjs';
import { waitUntil as waitFor } from '../harness/check.mjs';
import { token as signFor } from '../harness/jwt.mjs';

const CHAT = 42, OTHER_CHAT = 43;
const H_DIR = env('H_DIR');
const HISTORY = 300;
const web = ['--web-root', env('WEB_ROOT')];
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')), extra: web });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')), extra: web });


function pageUrl(own, sub, name, side, other, chats = [CHAT]) {
	const token = signFor(chats, { sub, ttlSeconds: 600, name });
	const hash = new URLSearchParams({ token, side, other });
	return `http://127.0.0.1:${own.port}/#${hash}`;
}

// What a page shows, read from the DOM.
const shown = (page) => page.$$eval('#messages > li', (lis) => lis.map((li) => ({
	body: li.querySelector('.body').textContent, mine: li.classList.contains('mine'), id: li.dataset.id,
	seq: li.dataset.seq, state: li.dataset.state, states: li.dataset.states, readBy: li.dataset.readBy })));
const presence = (page) => page.$$eval('#presence > li', (lis) => lis.map((li) => li.textContent).sort().join(' | '));


const connState = (page, sel, state) => waitDom(page, `${sel} is ${state}`,
	(s, st) => document.querySelector(s)?.dataset.state === st, sel, state);

const hasBody = (page, what, body, mine) => waitDom(page, what,
	(b, m) => [...document.querySelectorAll('#messages > li')].some((li) =>
		li.querySelector('.body').textContent === b && li.classList.contains('mine') === m), body, mine);

async function typeAndSend(page, body) {
	await page.type('#body', body);
	await page.keyboard.press('Enter');
}

const browser = await launchBrowser();
try {
	await Promise.all([workers.start(), consumers.start()]);
	// History: sent before anyone opened the chat, alternately by each side, each in its own transaction
	// (so each has its own created_at), in the other side's inbox once the relay moved it.
	const history = Array.from({ length: HISTORY }, (_, i) => `history ${String(i + 1).padStart(3, '0')} from ${i % 2 ? 'Workers' : 'Consumers'}`);
	for (const [i, body] of history.entries())
		await postgres.query(`SELECT ${i % 2 ? 'workers' : 'consumers'}.send_message($1, $2)`, [CHAT, body]);
	await waitFor('the history in both inboxes', async () => (await postgres.query(
		'SELECT (SELECT count(*) FROM workers.inbox)::int + (SELECT count(*) FROM consumers.inbox)::int AS n')).at(0).n === HISTORY, DEADLINE_MS);

	const pages = {};
	const pageErrors = []; // uncaught script errors and CSP violations: the page must have none
	const contexts = {};
	for (const [side, own, other] of [['Workers', workers, 'Consumers'], ['Consumers', consumers, 'Workers']]) {
		const ctx = await browser.createBrowserContext();
		const page = await ctx.newPage();
		await page.setViewport({ width: 760, height: 800 });
		page.on('pageerror', (e) => pageErrors.push(`[${side}] ${e.message}`));
		page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) pageErrors.push(`[${side}] ${m.text()}`); });
		await page.goto(pageUrl(own, `${side.toLowerCase()}-user`, side === 'Workers' ? 'Wanda' : 'Carl Öberg', side, other));
		pages[side] = page;
		contexts[side] = ctx;
	}
	const { Workers: wp, Consumers: cp } = pages;
	for (const p of [wp, cp]) await connState(p, '#conn', 'connected');
	// Loaded from the server, not a file: the served type is right and the library came from our folder.
	check(await wp.evaluate(() => typeof io === 'function' && document.contentType === 'text/html'), 'index.html and socket.io.min.js served by the daemon');

	check(await wp.$eval('#user', (e) => e.textContent) === 'Wanda · Workers' &&
		await cp.$eval('#user', (e) => e.textContent) === 'Carl Öberg · Consumers', 'each page shows its user\'s name claim and side');

	// History: the newest page on open, with both sides' messages; older ones by scrolling up.
	await hasBody(wp, 'the newest history shown on open: received', history[HISTORY - 2], false);
	await hasBody(wp, 'and sent by its own side', history[HISTORY - 1], true);
	check(!(await shown(wp)).some((m) => m.body === history[0]), 'the oldest history message is not loaded before scrolling up');
	for (const [side, page] of [['Workers', wp], ['Consumers', cp]]) {
		for (let i = 0; i < 20 && await page.$eval('#older', (e) => e.dataset.state) !== 'start'; i++) {
			const before = await page.evaluate(() => Number(document.body.dataset.historyPages || 0));
			await page.$eval('#scroller', (m) => { m.scrollTop = 0; m.dispatchEvent(new Event('scroll')); });
			await page.waitForFunction((n) => Number(document.body.dataset.historyPages || 0) > n || document.querySelector('#older').dataset.state === 'start',
				{ timeout: DEADLINE_MS, polling: 50 }, before);
		}
		const bodies = (await shown(page)).map((m) => m.body);
		check(JSON.stringify(bodies) === JSON.stringify(history), `${side}' page: scrolled up to the beginning, all ${HISTORY} history messages once, in order, no gap (${await page.evaluate(() => document.body.dataset.historyPages)} pages)`);
		check((await shown(page)).every((m) => m.mine === (m.body.endsWith(side))), `${side}' page: its side's messages on its side, the other side's on the other`);
	}
	await wp.$eval('#scroller', (m) => { m.scrollTop = m.scrollHeight; });
	await cp.$eval('#scroller', (m) => { m.scrollTop = m.scrollHeight; });

	// Presence: both users on both pages; a second tab of Carl counts once, and closing it keeps him.
	const both = 'Carl Öberg (Consumers) | Wanda (Workers)';
	await waitDom(wp, 'presence: both users on Workers\' page', (w) => [...document.querySelectorAll('#presence > li')].map((l) => l.textContent).sort().join(' | ') === w, both);
	await waitDom(cp, 'presence: both users on Consumers\' page', (w) => [...document.querySelectorAll('#presence > li')].map((l) => l.textContent).sort().join(' | ') === w, both);
	// Carl's second tab has a token for two chats: unread counts per chat in the chat selector.
	const tab2 = await contexts.Consumers.newPage();
	await tab2.goto(pageUrl(consumers, 'consumers-user', 'Carl Öberg', 'Consumers', 'Workers', [CHAT, OTHER_CHAT]));
	await connState(tab2, '#conn', 'connected');
	await waitDom(tab2, 'the second tab sees both users', (w) => [...document.querySelectorAll('#presence > li')].map((l) => l.textContent).sort().join(' | ') === w, both);
	check(await presence(wp) === both, 'presence: two tabs of one user count once');
	await postgres.query('SELECT workers.send_message($1, $2)', [OTHER_CHAT, 'for the other chat']);
	await waitDom(tab2, 'unread: the chat not in view counts the message that arrived there',
		(c) => document.querySelector(`#chat option[value="${c}"]`)?.dataset.unread === '1' &&
			/1 unread/.test(document.querySelector(`#chat option[value="${c}"]`).textContent), OTHER_CHAT);
	await tab2.select('#chat', String(OTHER_CHAT));
	await hasBody(tab2, 'switching to it shows the message', 'for the other chat', false);
	await waitDom(tab2, 'and, read, its unread count goes back to 0', (c) => document.querySelector(`#chat option[value="${c}"]`).dataset.unread === '0', OTHER_CHAT);
	await tab2.close();
	await sleep(500);
	check(await presence(wp) === both, 'presence: closing one of two tabs keeps the user');

	// Typing: shows on the other page, and goes by itself.
	await wp.type('#body', 'Hi Ca');
	await waitDom(cp, 'typing: "Wanda is typing…" on Consumers\' page', () => /Wanda is typing/.test(document.querySelector('#typing').textContent));
	await cp.screenshot({ path: `${H_DIR}/consumers-typing.png` });
	await waitDom(cp, 'typing: and it disappears by itself', () => document.querySelector('#typing').textContent === '');
	check(await wp.$eval('#typing', (e) => e.textContent) === '', 'typing: not shown to the typist');
	await wp.$eval('#body', (e) => { e.value = ''; });

	// A message typed in Workers' page.
	await typeAndSend(wp, 'Hi Carl, the order is packed.');
	await hasBody(cp, 'Workers\' message appears in Consumers\' page', 'Hi Carl, the order is packed.', false);
	await waitDom(wp, 'Workers\' own message goes waiting -> sent -> shown',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === 'Hi Carl, the order is packed.' && li.dataset.states === 'waiting sent shown'));
	await waitDom(wp, 'a read receipt appears on it once Consumers\' page has it in view', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Hi Carl, the order is packed.' && li.dataset.readBy === 'Carl Öberg' && /read by Carl Öberg/.test(li.textContent)));
	// And the reply from Consumers' page.
	await typeAndSend(cp, 'Thanks Wanda! When does it ship?');
	await hasBody(wp, 'Consumers\' reply appears in Workers\' page', 'Thanks Wanda! When does it ship?', false);
	await waitDom(cp, 'Consumers\' own message goes waiting -> sent -> shown',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === 'Thanks Wanda! When does it ship?' && li.dataset.states === 'waiting sent shown'));
	// A refused send shows the error, and stores nothing; no Retry (it would be refused again).
	await wp.$eval('#body', (e) => { e.value = 'x'.repeat(70000); });
	await wp.keyboard.press('Enter');
	await waitDom(wp, 'an over-long message fails with the database error, without a Retry',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) => li.dataset.state === 'failed' &&
			/body is too long/.test(li.querySelector('.state').textContent) && !li.querySelector('button.retry')));
	await wp.evaluate(() => [...document.querySelectorAll('#messages > li.mine')].find((li) => li.dataset.state === 'failed').remove());
	await wp.screenshot({ path: `${H_DIR}/workers-conversation.png` });
	await cp.screenshot({ path: `${H_DIR}/consumers-conversation.png` });

	// The workers daemon dies; its page must notice, and get everything sent meanwhile once it is back.
	await wp.evaluate(() => { window.sameDocument = true; });
	const killed = await workers.stop('SIGKILL');
	check(killed.signal === 'SIGKILL', 'workers daemon killed with SIGKILL');
	await connState(wp, '#conn', 'reconnecting');
	// Typed while disconnected: waits in the page's outbox (its client_msg_id stores it once), sent by itself.
	await typeAndSend(wp, 'Are you still there?');
	await waitDom(wp, 'a message typed while disconnected waits, without a Retry',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) => li.dataset.state === 'waiting' &&
			li.querySelector('.body').textContent === 'Are you still there?' && !li.querySelector('button')));
	const whileDown = Array.from({ length: 5 }, (_, i) => `sent while Workers' daemon was down #${i + 1}`);
	for (const body of whileDown) await postgres.query('SELECT consumers.send_message($1, $2)', [CHAT, body]);
	await wp.screenshot({ path: `${H_DIR}/workers-reconnecting.png` });
	await workers.start();
	await connState(wp, '#conn', 'back');
	await waitDom(wp, 'every message sent while down appears in Workers\' page',
		(bodies) => bodies.every((b) => [...document.querySelectorAll('#messages > li.theirs .body')].some((e) => e.textContent === b)), whileDown);
	await waitDom(cp, 'and in Consumers\' page as shown (the workers gateway is back)',
		(bodies) => bodies.every((b) => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === b && li.dataset.state === 'shown')), whileDown);
	await waitDom(wp, 'the waiting message is sent by itself: waiting -> sent -> shown', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Are you still there?' && li.dataset.states === 'waiting sent shown'));
	await hasBody(cp, 'and it appears in Consumers\' page', 'Are you still there?', false);
	check(await wp.evaluate(() => window.sameDocument === true), 'the page was not reloaded');
	// Whether the daemon pushed them live or replayed them from the offset depends on who was first after
	// the restart (its queue consumer or the page's reconnect); both must show each message once.
	console.log(`info: the restarted daemon replayed ${await workers.metric('chat_outboxd_gateway_catchup_messages_total')} messages from the offsets of the two pages' sockets; the rest it pushed live`);

	for (const [side, page] of [['Workers', wp], ['Consumers', cp]]) {
		const list = await shown(page);
		const bodies = list.map((m) => m.body);
		const want = [...history, 'Hi Carl, the order is packed.', 'Thanks Wanda! When does it ship?', ...whileDown, 'Are you still there?'];
		check(JSON.stringify(bodies) === JSON.stringify(want), `${side}' page shows the whole conversation once, in order (${bodies.length} messages: ${JSON.stringify(bodies.slice(HISTORY - 2))})`);
		check(await page.evaluate(() => document.body.dataset.duplicates === undefined), `${side}' page received no message twice from a gateway`);
		const inboxSeqs = list.filter((m) => !m.mine).map((m) => Number(m.seq));
		check(inboxSeqs.every((s, i) => i === 0 || s > inboxSeqs[i - 1]), `${side}' page: its inbox's ${inboxSeqs.length} messages in seq order`);
	}
	// Still usable after the restart: a new message both ways.
	await typeAndSend(wp, 'Ships tomorrow morning.');
	await hasBody(cp, 'a message sent after the restart arrives', 'Ships tomorrow morning.', false);
	await waitDom(wp, 'and reaches shown', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Ships tomorrow morning.' && li.dataset.state === 'shown'));
	await waitDom(wp, 'the read receipt moves on to the newest message', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Ships tomorrow morning.' && li.dataset.readBy === 'Carl Öberg'));
	await wp.screenshot({ path: `${H_DIR}/workers-back.png` });
	await cp.screenshot({ path: `${H_DIR}/consumers-back.png` });

	// Edits and deletes: Workers' user edits one of their messages and deletes another.
	const controls = (page) => page.$$eval('#messages > li', (lis) => lis.filter((li) => li.querySelector('button.edit-button'))
		.map((li) => li.querySelector('.body').textContent));
	check(JSON.stringify(await controls(cp)) === '["Thanks Wanda! When does it ship?"]' && (await controls(wp)).length === 3 &&
		!(await controls(wp)).some((b) => b.startsWith('history') || b.startsWith('sent while')),
		'Edit and Delete only on one\'s own messages (sent with one\'s sub), not on history sent without a sender nor on the other side\'s');
	const button = (page, body, cls) => page.evaluateHandle((b, c) => [...document.querySelectorAll('#messages > li')]
		.find((li) => li.querySelector('.body').textContent === b).querySelector(`button.${c}`), body, cls);
	await (await button(wp, 'Ships tomorrow morning.', 'edit-button')).click();
	await wp.$eval('#messages form.edit textarea', (t) => { t.value = ''; });
	await wp.type('#messages form.edit textarea', 'Ships tomorrow at 9.');
	await wp.click('#messages form.edit button[type="submit"]');
	const changed = (page, what, body, mark) => waitDom(page, what, (b, m) => [...document.querySelectorAll('#messages > li')].some((li) =>
		li.querySelector('.body').textContent === b && li.querySelector('.changed').textContent === m && !li.querySelector('form.edit')), body, mark);
	await changed(wp, 'an edit in Workers\' page: the new text, marked edited', 'Ships tomorrow at 9.', 'edited');
	await changed(cp, 'and live in Consumers\' page (message_edited)', 'Ships tomorrow at 9.', 'edited');
	const goneId = (await shown(cp)).find((m) => m.body === 'Hi Carl, the order is packed.').id;
	await (await button(wp, 'Hi Carl, the order is packed.', 'delete-button')).click();
	const deleted = (page, what, id) => waitDom(page, what, (i) => {
		const li = document.querySelector(`#messages > li[data-id="${i}"]`);
		return li && li.dataset.deleted === 'true' && li.querySelector('.body').textContent === '' &&
			li.querySelector('.changed').textContent === 'deleted' && !li.querySelector('button.edit-button');
	}, id);
	await deleted(wp, 'a delete in Workers\' page: no text, marked deleted, no more Edit', goneId);
	await deleted(cp, 'and live in Consumers\' page (message_deleted)', goneId);
	await cp.screenshot({ path: `${H_DIR}/consumers-edited.png` });
	await cp.reload();
	await connState(cp, '#conn', 'connected');
	await changed(cp, 'after a reload of Consumers\' page: the edit from history', 'Ships tomorrow at 9.', 'edited');
	await deleted(cp, 'and the delete', goneId);
	// A closed page drops out of the other's presence.
	await cp.close();
	await waitDom(wp, 'presence: Consumers\' page closed, Carl drops out', () =>
		[...document.querySelectorAll('#presence > li')].map((l) => l.textContent).join(' | ') === 'Wanda (Workers)');
	// Shown is kept: with nobody on the other side to read it, a message reaches shown, and a page loaded
	// afterwards still shows it so (chat_state.shown), not merely sent.
	await typeAndSend(wp, 'Sent while Carl is away.');
	await waitDom(wp, 'a message nobody reads reaches shown', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Sent while Carl is away.' && li.dataset.state === 'shown' && !li.dataset.readBy));
	await wp.reload();
	await connState(wp, '#conn', 'connected');
	await waitDom(wp, 'after a reload, the message loaded from history shows shown, without a read receipt',
		() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
			li.querySelector('.body').textContent === 'Sent while Carl is away.' && li.dataset.state === 'shown' && !li.dataset.readBy));
	await changed(wp, 'after a reload of Workers\' page: its edit from history, with Edit still offered', 'Ships tomorrow at 9.', 'edited');
	await deleted(wp, 'and its delete', goneId);
	// Written while the daemon is down, the page reloaded as soon as it is back: the message waited in
	// localStorage across the reload, and is stored and shown once.
	await workers.stop('SIGKILL');
	await connState(wp, '#conn', 'reconnecting');
	await typeAndSend(wp, 'Written offline, then reloaded.');
	await waitDom(wp, 'written while the daemon is down: waiting, and kept in localStorage', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Written offline, then reloaded.' && li.dataset.state === 'waiting') &&
		Object.keys(localStorage).some((k) => localStorage.getItem(k).includes('Written offline, then reloaded.')));
	await workers.start();
	await wp.reload();
	await waitDom(wp, 'after the reload: the message once, sent', () => {
		const lis = [...document.querySelectorAll('#messages > li.mine')].filter((li) => li.querySelector('.body').textContent === 'Written offline, then reloaded.');
		return lis.length === 1 && ['sent', 'shown'].includes(lis[0].dataset.state);
	});
	await waitDom(wp, 'and the outbox in localStorage empty', () => !Object.keys(localStorage).some((k) => localStorage.getItem(k).includes('Written offline')));
	const offlineRows = await postgres.query('SELECT count(*)::int AS n FROM workers.messages WHERE body = $1', ['Written offline, then reloaded.']);
	check(offlineRows[0].n === 1, `written offline and reloaded: stored once (${offlineRows[0].n})`);
	// The daemon killed between the commit and the ack: a proxy in front of Postgres holds back every
	// answer on the connection that sends the message's send_message, so the send commits and its
	// answer never reaches the daemon; once the row is committed the daemon is SIGKILLed and started again.
	let hold = false;
	const held = new Set();
	const pgProxy = net.createServer((c) => {
		const pgUrl = new URL(env('PGURL'));
		const up = net.connect(Number(pgUrl.port), pgUrl.hostname);
		let holding = false;
		c.on('data', (d) => {
			if (hold && d.includes('send_message')) holding = true;
			up.write(d);
		});
		up.on('data', (d) => { if (!holding) c.write(d); });
		const end = () => { c.destroy(); up.destroy(); held.delete(c); };
		c.on('error', end); up.on('error', end); c.on('close', end); up.on('close', end);
		held.add(c);
	});
	await new Promise((r) => pgProxy.listen(0, '127.0.0.1', r));
	const proxied = new URL(env('PGURL'));
	proxied.port = String(pgProxy.address().port);
	await workers.stop();
	await workers.start(['--database-url', proxied.toString()]);
	await connState(wp, '#conn', 'back');
	hold = true;
	await typeAndSend(wp, 'Committed, then the daemon died.');
	await waitFor('the message committed', async () => (await postgres.query('SELECT count(*)::int AS n FROM workers.messages WHERE body = $1',
		['Committed, then the daemon died.']))[0].n === 1, 20000);
	check(await wp.evaluate(() => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'Committed, then the daemon died.' && li.dataset.state === 'waiting')),
	'committed but not acked: still waiting in the page');
	await workers.stop('SIGKILL');
	for (const c of held) c.destroy();
	pgProxy.close();
	await workers.start();
	await waitDom(wp, 'after the restart the page sends it again: once, sent', () => {
		const lis = [...document.querySelectorAll('#messages > li.mine')].filter((li) => li.querySelector('.body').textContent === 'Committed, then the daemon died.');
		return lis.length === 1 && ['sent', 'shown'].includes(lis[0].dataset.state) && lis[0].dataset.id;
	});
	const diedRows = await postgres.query('SELECT count(*)::int AS n FROM workers.messages WHERE body = $1', ['Committed, then the daemon died.']);
	check(diedRows[0].n === 1, `killed between the commit and the ack: stored once (${diedRows[0].n})`);
	// The network gone: a page of Workers' side served through a proxy that, once cut, holds everything
	// both ways and closes nothing (a pulled cable: TCP keeps what was written and delivers it when the
	// network returns); a message written meanwhile waits in the page, its send maybe held in the cable.
	// The network returns and the page is reloaded at once: what the cable held and the page's own
	// resend (the same client_msg_id) race to the daemon; the message is stored once and shown once.
	let cut = false;
	const backlog = [];
	const links = new Set();
	const netProxy = net.createServer((c) => {
		const up = net.connect(workers.port, '127.0.0.1');
		const pass = (to) => (d) => { if (cut) backlog.push(() => to.write(d)); else to.write(d); };
		c.on('data', pass(up));
		up.on('data', pass(c));
		const end = () => { c.destroy(); up.destroy(); links.delete(c); };
		c.on('error', end); up.on('error', end); c.on('close', end); up.on('close', end);
		links.add(c);
	});
	await new Promise((r) => netProxy.listen(0, '127.0.0.1', r));
	const np = await contexts.Workers.newPage();
	np.on('pageerror', (e) => pageErrors.push(`[Workers via the cable] ${e.message}`));
	await np.goto(pageUrl({ port: netProxy.address().port }, 'workers-user', 'Wanda', 'Workers', 'Consumers'));
	await connState(np, '#conn', 'connected');
	const cableBody = 'Written with the network gone, reloaded when it came back.';
	cut = true;
	await typeAndSend(np, cableBody);
	await waitDom(np, 'written with the network gone: waiting, and kept in localStorage', (b) => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === b && li.dataset.state === 'waiting') &&
		Object.keys(localStorage).some((k) => localStorage.getItem(k).includes(b)), cableBody);
	cut = false;
	for (const deliver of backlog.splice(0)) deliver();
	await np.reload();
	await waitDom(np, 'after the network came back and the reload: the message once, sent', (b) => {
		const lis = [...document.querySelectorAll('#messages > li.mine')].filter((li) => li.querySelector('.body').textContent === b);
		return lis.length === 1 && ['sent', 'shown'].includes(lis[0].dataset.state);
	}, cableBody);
	await hasBody(wp, 'and shown in the page outside the cable', cableBody, true);
	const cableRows = await postgres.query('SELECT count(*)::int AS n FROM workers.messages WHERE body = $1', [cableBody]);
	check(cableRows[0].n === 1, `written with the network gone and reloaded: stored once (${cableRows[0].n})`);
	for (const c of links) c.destroy();
	netProxy.close();
	check(pageErrors.length === 0, `no script errors or CSP violations in the pages ${JSON.stringify(pageErrors)}`);
	console.log('PASS');
} finally {
	await browser.close().catch(() => {});
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
