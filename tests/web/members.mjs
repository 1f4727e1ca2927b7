// tests/web/members.mjs - the web client in headless Chromium against a workers gateway with --authz
// membership: a user in chats 42 and 43 (a token whose chats claim names both) is removed from 42
// while the page shows it:
//  - the page shows a notice, marks chat 42 removed in the selector, and disables writing there, and
//    its own message there loses Edit and Delete;
//  - a message sent to 42 after the removal never appears, while one sent to 43 after it does;
//  - switching to chat 43 hides the notice and enables writing again; after a reload (the token still
//    names 42) the page shows 42 as removed (its history is refused forbidden), not as an error;
//  - a second page whose token has only sub and exp (no chats claim) shows the chats the gateway
//    joined it to (42 and 43, 42 first as its URL asks), the message of 42, and the removal too;
//  - with --max-member-chats 2, two chats added to her membership: both pages are told `chats_cut` live and
//    show a notice.
// Run through tests/web/chat.sh members.mjs.
import { launchBrowser, check, waitDom } from './page.mjs';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import jwt from 'jsonwebtoken';
import { token as signFor, SECRET } from '../harness/jwt.mjs';

const CHAT = 42, OTHER_CHAT = 43;
const H_DIR = env('H_DIR');
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')),
	extra: ['--web-root', env('WEB_ROOT'), '--authz', 'membership', '--max-member-chats', '2'] });

const hasBody = (page, what, body) => waitDom(page, what,
	(b) => [...document.querySelectorAll('#messages > li')].some((li) => li.querySelector('.body').textContent === b), body);
const bodies = (page) => page.$$eval('#messages > li .body', (els) => els.map((e) => e.textContent));

const browser = await launchBrowser();
let failed = false;
try {
	await postgres.query("SELECT chat_outbox.add_member($1, 'wanda'), chat_outbox.add_member($2, 'wanda')", [CHAT, OTHER_CHAT]);
	await workers.start();
	const page = await (await browser.createBrowserContext()).newPage();
	const pageErrors = [];
	page.on('pageerror', (e) => pageErrors.push(e.message));
	await page.setViewport({ width: 760, height: 700 });
	const token = signFor([CHAT, OTHER_CHAT], { sub: 'wanda', name: 'Wanda', ttlSeconds: 600 });
	await page.goto(`http://127.0.0.1:${workers.port}/#${new URLSearchParams({ token, side: 'Workers', other: 'Consumers', chat: String(CHAT) })}`);
	await waitDom(page, 'connected', () => document.querySelector('#conn').dataset.state === 'connected');
	// the same user with a token of only sub and exp: the page learns her chats from the gateway
	const bare = await (await browser.createBrowserContext()).newPage();
	bare.on('pageerror', (e) => pageErrors.push(`[sub only] ${e.message}`));
	const subOnly = jwt.sign({ sub: 'wanda', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET, { algorithm: 'HS256' });
	await bare.goto(`http://127.0.0.1:${workers.port}/#${new URLSearchParams({ token: subOnly, side: 'Workers', other: 'Consumers', chat: String(CHAT) })}`);
	await waitDom(bare, 'a token without chats: the page shows the chats of her membership, the asked one first', (a, b) =>
		[...document.querySelectorAll('#chat option')].map((o) => o.value).sort().join() === `${a},${b}` &&
		!document.querySelector('#chat-pick').hidden && document.querySelector('#title').textContent === `Chat ${a}` &&
		!document.querySelector('#body').disabled, CHAT, OTHER_CHAT);

	await postgres.query('SELECT consumers.send_message($1, $2)', [CHAT, 'before the removal']);
	await hasBody(page, 'a message of chat 42 shown', 'before the removal');
	await hasBody(bare, 'and on the page of the token without chats', 'before the removal');
	await page.type('#body', 'mine, before');
	await page.keyboard.press('Enter');
	await waitDom(page, 'her own message is sent, with Edit and Delete', () => [...document.querySelectorAll('#messages > li.mine')].some((li) =>
		li.querySelector('.body').textContent === 'mine, before' && li.dataset.state === 'sent' && li.querySelector('button.edit-button')));
	check(await page.$eval('#removed', (e) => e.hidden), 'no notice while a member');

	await postgres.query("SELECT chat_outbox.remove_member($1, 'wanda')", [CHAT]);
	await waitDom(page, 'removed: the notice names the chat', (c) => {
		const n = document.querySelector('#removed');
		return !n.hidden && n.dataset.chat === String(c) && /no longer a member of chat 42/.test(n.textContent);
	}, CHAT);
	check(await page.evaluate(() => document.querySelector('#body').disabled && document.querySelector('#send-button').disabled),
		'writing in the chat is disabled');
	await waitDom(bare, 'the page of the token without chats shows the removal too', () => !document.querySelector('#removed').hidden &&
		document.querySelector('#body').disabled);
	check(await page.$eval(`#chat option[value="${CHAT}"]`, (o) => o.disabled && /removed/.test(o.textContent)),
		'the chat is marked removed in the selector');
	check(await page.evaluate(() => !document.querySelector('#messages > li.mine button.edit-button, #messages > li.mine button.delete-button')),
		'her own message there has no Edit or Delete any more');
	check((await bodies(page)).includes('before the removal'), 'what was shown before stays');
	await page.screenshot({ path: `${H_DIR}/members-removed.png` });

	// after the removal: 42's message is delivered before 43's (seq order), so once 43's is shown, 42's would be too
	await postgres.query('SELECT consumers.send_message($1, $2)', [CHAT, 'after the removal']);
	await postgres.query('SELECT consumers.send_message($1, $2)', [OTHER_CHAT, 'in the other chat']);
	await hasBody(page, 'a message of chat 43 sent after the removal arrives', 'in the other chat');
	check(!(await bodies(page)).includes('after the removal'), 'the message of chat 42 sent after the removal never appears');

	await page.select('#chat', String(OTHER_CHAT));
	await waitDom(page, 'in chat 43: no notice, writing enabled', () => document.querySelector('#removed').hidden &&
		!document.querySelector('#body').disabled && !document.querySelector('#send-button').disabled);
	// a reload: the token still names chat 42, the gateway refuses its history; the page shows it as removed
	await page.reload();
	await waitDom(page, 'after a reload, the chat the token names but the membership does not: shown removed', (c) => {
		const n = document.querySelector('#removed');
		return !n.hidden && n.dataset.chat === String(c) && document.querySelector('#body').disabled &&
			document.querySelector(`#chat option[value="${c}"]`).disabled && !document.querySelector('#problem').textContent;
	}, CHAT);
	// two chats added while the pages are open: three of hers, one more than --max-member-chats 2: told live
	check(await page.$eval('#cut', (e) => e.hidden) && await bare.$eval('#cut', (e) => e.hidden), 'no cut notice within the bound');
	await postgres.query("SELECT chat_outbox.add_member(44, 'wanda'), chat_outbox.add_member(45, 'wanda')");
	for (const [p, which] of [[page, 'the page'], [bare, 'the page of the token without chats']])
		await waitDom(p, `chats_cut told live: ${which} says only the first 2 chats are shown`, () =>
			!document.querySelector('#cut').hidden && document.querySelector('#cut').dataset.max === '2');
	check(pageErrors.length === 0, `no script errors${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`);
} catch (e) {
	console.error(e.message);
	failed = true;
} finally {
	await browser.close();
	await workers.stop();
}
process.exit(failed ? 1 : 0);
