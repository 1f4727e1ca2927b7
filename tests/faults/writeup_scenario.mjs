// tests/faults/writeup_scenario.mjs - the write-up's failure experiment, on our system.
//
// Separate processes: a sender (sender.mjs) calling <sender>.send_message once every 400 ms,
// the relay inside Postgres, the receiving chat-outboxd, and a socket.io client in chat:<id>
// counting what it is shown. Faults at the write-up's moments:
//   - the receiving daemon crashes right after recording message 2 in its inbox (SIGKILL at an
//     injected crash point, before it completes the job) and is started again;
//   - the receiving daemon is redeployed (stopped, started again) during messages 4-6;
//   - Redis is stopped during messages 7-8 and, at that moment, the sender is redeployed;
//     with --pg-restart Postgres is also restarted (pg_ctl restart -m fast) during the outage.
// Fails if anything was lost, shown twice or shown out of order.
//   node writeup_scenario.mjs --direction consumers->workers [--pg-restart]
import { DIRECTIONS, receivingDaemon, Sender, watcher, redis, postgres, waitUntil, sleep } from './procs.mjs';

const argv = process.argv;
const direction = argv.includes('--direction') ? argv[argv.indexOf('--direction') + 1] : 'consumers->workers';
const pgRestart = argv.includes('--pg-restart');
const { sender: senderSvc, receiver, queue } = DIRECTIONS[direction];
const CHAT = Number(argv.includes('--chat') ? argv[argv.indexOf('--chat') + 1] : 7);
const N = 10;
const PACE_MS = 400;
const port = Number(process.env.DAEMON_PORT);
const t0 = Date.now();
const stamp = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s`;
const say = (s) => console.log(`${stamp()}  ${s}`);

console.log(`== write-up scenario, ${direction}${pgRestart ? ', Postgres restarted during the Redis outage' : ''} ==`);
const saved = new Map(); // n -> {id, ts}
const byId = new Map();
const daemon = receivingDaemon({ service: receiver, queue, port, extra: ['--lock-duration', '5000', '--stalled-interval', '5000'] });

// 1st instance crashes right after its 2nd inbox commit (message 2), before completing the job.
await daemon.start(['--crash-after-inbox', '2']);
let crashHandled = false;
const client = watcher({
	port, chats: [CHAT], name: `${receiver}-client`,
	onMessage: (m) => say(`msg ${byId.get(m.id) ?? '?'} shown by ${receiver} (seq ${m.seq})`),
});
await waitUntil('the client to connect', () => client.socket.connected, 10000);
const watchCrash = daemon.exited.then(async ({ signal }) => {
	say(`${receiver} daemon died (${signal}) right after recording msg 2 in its inbox; starting it again`);
	crashHandled = true;
	await daemon.start();
});

let sender = new Sender({
	service: senderSvc, chat: CHAT,
	onSaved: (n, id, ts) => { saved.set(n, { id, ts }); byId.set(id, n); say(`msg ${n} saved by ${senderSvc}`); },
});
await sender.start();

for (let n = 1; n <= N; n++) {
	const tick = Date.now();
	if (n === 4) {
		await watchCrash;
		say(`redeploy ${receiver}: stopping the daemon (messages 4-6 wait in Redis)`);
		await daemon.stop('SIGTERM');
	}
	if (n === 7) {
		say('Redis stopped (messages 7-8 wait in the outbox)');
		redis.stop();
	}
	await sender.send(n);
	if (n === 6) {
		say(`redeploy ${receiver}: daemon started again`);
		await daemon.start();
	}
	if (n === 8) {
		say(`redeploy ${senderSvc}: sender process stopped and started again (Redis still down)`);
		await sender.stop();
		if (pgRestart) {
			say('Postgres restarted (pg_ctl restart -m fast), the relay with it');
			postgres.restart('fast');
		}
		sender = new Sender({ service: senderSvc, chat: CHAT, onSaved: sender.onSaved });
		await sender.start();
		say('Redis started again');
		redis.start();
	}
	await sleep(Math.max(0, PACE_MS - (Date.now() - tick)));
}

const ids = [...saved.values()].map((s) => s.id);
await waitUntil('every message to be shown', () => ids.every((id) => client.seen.some((m) => m.id === id)), 60000)
	.catch((e) => say(e.message));
await waitUntil('the outbox to drain', async () => (await postgres.query(
	`SELECT count(*)::int AS n FROM ${senderSvc}.outbox WHERE sent_at IS NULL`))[0].n === 0, 30000).catch((e) => say(e.message));
await sleep(500); // a late duplicate push would show up here; the checks below would catch it

const shownIds = client.seen.map((m) => m.id);
const lost = [...saved.entries()].filter(([, s]) => !shownIds.includes(s.id)).map(([n]) => `msg ${n}`);
const twice = [...new Set(shownIds.filter((id, i) => shownIds.indexOf(id) !== i))].map((id) => `msg ${byId.get(id)}`);
const order = client.seen.map((m) => byId.get(m.id));
const outOfOrder = order.some((n, i) => i > 0 && n < order[i - 1]);
const [{ received }] = await postgres.query(`SELECT count(*)::int AS received FROM ${receiver}.inbox WHERE message_id = ANY($1::uuid[])`, [ids]);
const [{ unsent }] = await postgres.query(`SELECT count(*)::int AS unsent FROM ${senderSvc}.outbox WHERE sent_at IS NULL`);
const [{ savedCount }] = await postgres.query(`SELECT count(*)::int AS "savedCount" FROM ${senderSvc}.messages WHERE chat_id = $1`, [CHAT]);

console.log('');
console.log(`saved by ${senderSvc}: ${savedCount}   received by ${receiver}: ${received}   duplicates skipped: ${daemon.duplicates}`);
console.log(`lost: ${lost.length ? lost.join(', ') : 'none'}`);
console.log(`shown twice: ${twice.length ? twice.join(', ') : 'none'}   shown in order: ${outOfOrder ? `NO (${order.join(' ')})` : 'yes'}`);
console.log(`unsent in outbox: ${unsent}`);

client.socket.close();
await sender.stop();
await daemon.stop('SIGTERM');

const failures = [];
if (!crashHandled) failures.push('the injected crash after msg 2 never happened');
if (savedCount !== N) failures.push(`saved ${savedCount}, expected ${N}`);
if (received !== N) failures.push(`received ${received}, expected ${N}`);
if (lost.length) failures.push(`lost ${lost.join(', ')}`);
if (twice.length) failures.push(`shown twice: ${twice.join(', ')}`);
if (outOfOrder) failures.push('shown out of order');
if (unsent !== 0) failures.push(`${unsent} rows unsent`);
// msg 2 comes again after the crash and is skipped; a Redis stop that lands while a batch's completion
// is on the wire ("complete: reply lost" in the daemon's log) brings that batch again too, skipped the
// same way: how many depends on timing, that none is shown twice does not.
if (daemon.duplicates < 1) failures.push(`duplicates skipped ${daemon.duplicates}, expected at least 1 (msg 2 after the crash)`);
if (failures.length) {
	console.log(`FAIL: ${failures.join('; ')}`);
	process.exit(1);
}
console.log('PASS');
process.exit(0);
