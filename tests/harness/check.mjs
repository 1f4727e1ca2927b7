// tests/harness/check.mjs - the assertions and waits of the Node test peers.
//   check(name, ok, detail)   prints "ok" or "FAIL" with the name and counts failures
//   finish()                  prints the tally and exits 1 if any check failed, 0 otherwise
//   waitFor(what, cond, ms)   polls cond until true: true, or false (and a line saying so) after ms;
//                             for a check that follows and says what went wrong
//   waitUntil(what, cond, ms) the same, but throws after ms: for a step the test cannot go on without
//   env(name)                 a variable the shell harness must have set, or a clear error
// A cond may be async; one that throws counts as "not yet".

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const env = (name) => {
	if (!process.env[name]) throw new Error(`${name} is not set (run the peer through its suite's .sh)`);
	return process.env[name];
};

let failures = 0;
// check prints one line per check; a long detail (a dump of message bodies) is cut to 500 characters.
export function check(name, ok, detail = '') {
	const text = String(detail);
	const shown = text.length > 500 ? `${text.slice(0, 500)}... (${text.length} characters)` : text;
	console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${shown ? ' -- ' + shown : ''}`);
	if (!ok) failures++;
}

export function finish() {
	console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
	process.exit(failures ? 1 : 0);
}

// poll returns null once cond held, or the last error (or true) when ms ran out.
async function poll(cond, ms, everyMs) {
	const deadline = Date.now() + ms;
	for (;;) {
		let last = true;
		try {
			if (await cond()) return null;
		} catch (e) {
			last = e;
		}
		if (Date.now() > deadline) return last;
		await sleep(everyMs);
	}
}

export async function waitFor(what, cond, ms = 10000, everyMs = 20) {
	if ((await poll(cond, ms, everyMs)) === null) return true;
	console.log(`   (timed out waiting for ${what})`);
	return false;
}

export async function waitUntil(what, cond, ms = 30000, everyMs = 50) {
	const last = await poll(cond, ms, everyMs);
	if (last !== null) throw new Error(`timed out after ${ms} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}
