// tests/extension/send.mjs <count | until:FILE> <tag> <interval_ms> [acked_file] - send messages
// through send_message() at a steady pace, riding out server restarts: on a connection error it
// reconnects and sends that message again. A send whose commit was lost in flight may be stored
// twice; the tests count what Postgres stored, never what was attempted. Env: PGURL.
//   until:FILE   send until FILE exists (a test that waits for sends after an event it caused
//                needs a sender that is still sending then, however fast the machine is)
//   acked_file   one line appended per acknowledged send, so a test can wait for N more
import fs from 'node:fs';
import pg from 'pg';

const [what, tag, interval, acked] = [process.argv[2], process.argv[3], Number(process.argv[4]), process.argv[5]];
const stopFile = what.startsWith('until:') ? what.slice('until:'.length) : null;
const count = stopFile ? Infinity : Number(what);
let client = null;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connected() {
	while (!client) {
		const c = new pg.Client({ connectionString: process.env.PGURL });
		c.on('error', () => {});
		try { await c.connect(); client = c; } catch { await sleep(100); }
	}
	return client;
}

let n = 0;
for (; n < count && !(stopFile && fs.existsSync(stopFile)); n++) {
	for (;;) {
		try {
			await (await connected()).query('SELECT consumers.send_message($1, $2)', [n % 5 + 1, `${tag}-${n}`]);
			break;
		} catch (e) {
			console.log(`send ${n}: ${e.message}; retrying`);
			client?.end().catch(() => {});
			client = null;
			await sleep(100);
		}
	}
	if (acked) fs.appendFileSync(acked, `${n}\n`);
	await sleep(interval);
}
await client?.end();
console.log(`sent ${n}`);
