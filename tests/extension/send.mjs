// tests/extension/send.mjs <count> <tag> <interval_ms> - send messages through send_message()
// at a steady pace, riding out server restarts: on a connection error it reconnects and sends
// that message again. A send whose commit was lost in flight may be stored twice; the tests
// count what Postgres stored, never what was attempted. Env: PGURL.
import pg from 'pg';

const [count, tag, interval] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
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

for (let n = 0; n < count; n++) {
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
	await sleep(interval);
}
await client.end();
console.log(`sent ${count}`);
