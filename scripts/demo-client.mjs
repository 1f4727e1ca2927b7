// scripts/demo-client.mjs - the demo's two users: one on the Consumers side, one on the Workers side.
// Each connects a real socket.io-client to its side's daemon; messages are sent both ways, through
// SQL (send_message) and through the socket's `send` event, and printed as they are shown.
// Then (or alone, with --urls-only) it prints the web client's two links, one per side, each with a
// freshly signed token for chat 42.
import { createRequire } from 'node:module';
import { signToken } from '../tests/harness/jwt.mjs';

const require = createRequire(new URL('../tests/package.json', import.meta.url));
const { io } = require('socket.io-client');
const pg = require('pg');

const arg = (name) => process.argv[process.argv.indexOf(`--${name}`) + 1];
const CHAT = 42;
const secret = arg('secret');

// The web client's link for one side: its own daemon serves the page and is its one connection. The
// token rides in the fragment, which browsers never send.
function webUrl(side, other, own, name) {
	const token = signToken({ sub: `demo-${side.toLowerCase()}`, chats: [CHAT], ttlSeconds: 8 * 3600, name }, secret);
	return `${own}/#${new URLSearchParams({ token, side, other })}`;
}
function printUrls() {
	console.log('\nOpen the chat in a browser (tokens valid 8 hours; `scripts/demo.sh urls` prints fresh ones):');
	console.log(`  Workers side:   ${webUrl('Workers', 'Consumers', arg('workers'), 'Wanda')}`);
	console.log(`  Consumers side: ${webUrl('Consumers', 'Workers', arg('consumers'), 'Carl')}`);
}
if (process.argv.includes('--urls-only')) {
	printUrls();
	process.exit(0);
}

const db = new pg.Client({ connectionString: arg('pg') });
await db.connect();

function connect(side, url) {
	const token = signToken({ sub: `demo-${side}`, chats: [CHAT] }, secret);
	const socket = io(url, { auth: { token }, reconnectionDelay: 200 });
	socket.on('connect_error', (e) => console.log(`[${side}] connect_error: ${e.message}`));
	return socket;
}

const shown = new Map();
function watch(side, socket) {
	socket.on('message', (m) => {
		const t0 = shown.get(m.id);
		const ms = t0 ? ` (${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(2)} ms after send)` : '';
		console.log(`[${side}] shown in chat:${m.chat_id}: "${m.body}" seq=${m.seq}${ms}`);
		shown.set(m.id, 'done');
	});
}

const onWorkers = connect('workers', arg('workers'));
const onConsumers = connect('consumers', arg('consumers'));
watch('workers side', onWorkers);
watch('consumers side', onConsumers);
await Promise.all([onWorkers, onConsumers].map((s) => new Promise((ok, bad) => {
	s.once('connect', ok);
	setTimeout(() => bad(new Error('daemon did not accept the connection within 10 s')), 10000);
})));
console.log('both sides connected; sending 3 messages each way\n');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (let i = 1; i <= 3; i++) {
	const t0 = process.hrtime.bigint();
	const { rows } = await db.query('SELECT * FROM consumers.send_message($1, $2)', [CHAT, `hello from consumers #${i}`]);
	shown.set(rows[0].id, t0);
	console.log(`[consumers] sent via SQL: ${rows[0].id}`);
	await sleep(300);
	const t1 = process.hrtime.bigint();
	const ack = await onWorkers.timeout(5000).emitWithAck('send', { chat_id: CHAT, body: `reply from workers #${i}` });
	if (ack.ok) shown.set(ack.message.id, t1);
	console.log(`[workers] sent via socket: ${ack.ok ? ack.message.id : JSON.stringify(ack.error)}`);
	await sleep(300);
}
await sleep(1000);
const { rows: [s] } = await db.query(`SELECT
	(SELECT count(*) FROM consumers.messages) AS consumers_sent, (SELECT count(*) FROM workers.inbox) AS workers_received,
	(SELECT count(*) FROM workers.messages) AS workers_sent, (SELECT count(*) FROM consumers.inbox) AS consumers_received`);
console.log(`\nsaved by consumers: ${s.consumers_sent}   received by workers: ${s.workers_received}   ` +
	`saved by workers: ${s.workers_sent}   received by consumers: ${s.consumers_received}`);
onWorkers.close();
onConsumers.close();
await db.end();
printUrls();
