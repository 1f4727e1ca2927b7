// tests/faults/sender.mjs - the sending service as its own process, as in the write-up.
// Reads "send <n>" lines on stdin, calls <service>.send_message(chat, 'msg <n>') and prints
// "saved <n> <uuid> <epoch ms>" once the transaction committed. Redeploying it = killing this
// process and starting another; whatever it committed is in Postgres, nothing waits in its memory.
import pg from 'pg';
import readline from 'node:readline';

const arg = (name, def) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : def);
const service = arg('service', 'consumers');
const chat = Number(arg('chat', '7'));
const db = new pg.Client({ connectionString: arg('pg') });
await db.connect();
console.log('ready');

for await (const line of readline.createInterface({ input: process.stdin })) {
	const [cmd, n, prefix = 'msg'] = line.trim().split(/\s+/);
	if (cmd !== 'send') continue;
	const { rows } = await db.query(`SELECT id FROM ${service}.send_message($1, $2)`, [chat, `${prefix} ${n}`]);
	console.log(`saved ${n} ${rows[0].id} ${Date.now()}`);
}
await db.end();
