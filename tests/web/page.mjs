// tests/web/page.mjs - what the browser suites (chat.mjs, members.mjs) share: the browser, the step
// check, and waiting for a state of a page's DOM.
// A DOM wait is for a state the suite itself caused (a message sent, a member removed): its deadline is
// only there to name the step that never came, so it is far above any wait a loaded machine makes,
// and below the suite's CTest timeout (tests/web/tests.cmake).
import puppeteer from 'puppeteer-core';

export const DEADLINE_MS = 60000;

export function launchBrowser() {
	return puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
}

// A step the suite cannot go on without: prints "ok: what" or throws "FAIL: what".
export function check(cond, what) {
	if (!cond) throw new Error(`FAIL: ${what}`);
	console.log(`ok: ${what}`);
}

// Waits until fn(...args), run in the page, is true.
export const waitDom = (page, what, fn, ...args) =>
	page.waitForFunction(fn, { timeout: DEADLINE_MS, polling: 50 }, ...args).then(() => console.log(`ok: ${what}`),
		(e) => { throw new Error(`FAIL: ${what}: ${e.message}`); });
