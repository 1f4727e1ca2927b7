// tests/ha/pg_failover.mjs - the Postgres primary is lost and its synchronous standby promoted.
//
//   1. messages 1-10 are sent on the primary and shown; the standby's relay says `standby`;
//      an in-doubt COMMIT that did commit (in_doubt.mjs): the standby is stopped, message "in doubt
//      A" is sent and its COMMIT waits for the standby, the primary is killed (the sender gets an
//      error), then started again by itself: crash recovery keeps the commit, the sender's lookup
//      finds it, and it is shown once; the standby starts again and follows;
//   2. the primary's relay is paused (relay_enabled = off), messages 11-20 are committed there and
//      wait in its outbox (and, by synchronous replication, in the standby's);
//   3. an in-doubt COMMIT that did not: the standby is stopped, "in doubt B" waits for it, the
//      primary is killed (a crash), the standby starts again without B's commit record;
//      a send to the dead primary now fails with an error the sender sees,
//      and ten sends a socket.io client makes through the gateway meanwhile are each acked either
//      committed (then the new primary has them) or refused with an error;
//   4. the standby is promoted (pg_ctl promote): its relay starts relaying, chat-outboxd (given both
//      hosts, the standby first, and asking libpq for a primary itself) reconnects to it; the
//      sender's lookup does not find "in doubt B" there, so it sends it again (shown once, B itself
//      never); messages 22-30 are sent there.
// Fails if a committed message is lost, one is shown twice or out of order, or a row stays unsent.
// The primary's relay marked 1-10 sent with synchronous_commit = off, so the new primary may relay
// some again: BullMQ's job ids and the inbox absorb that, and the client must still see each once.
import { execSync } from 'node:child_process';
import pg from 'pg';
import { receivingDaemon, watcher, waitUntil, sleep, env } from '../faults/procs.mjs';
import { shownOnce, finish } from './verdict.mjs';
import { commitInDoubt, findSent } from './in_doubt.mjs';

const CHAT = 41;
const port = Number(env('DAEMON_PORT'));
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const primaryUrl = env('PGURL');
const standbyUrl = env('STANDBY_URL');

async function query(url, sql, params = []) {
	const c = new pg.Client({ connectionString: url });
	try {
		await c.connect();
		return (await c.query(sql, params)).rows;
	} finally {
		c.end().catch(() => {});
	}
}
const relayState = async (url) =>
	(await query(url, "SELECT relay_state FROM chat_outbox.status WHERE service = 'consumers'"))[0]?.relay_state;

const saved = new Map(); // n -> id: committed sends
const byId = new Map();
const refused = [];
async function send(url, n) {
	try {
		const [{ id }] = await query(url, 'SELECT id FROM consumers.send_message($1, $2)', [CHAT, `msg ${n}`]);
		saved.set(n, id);
		byId.set(id, n);
	} catch (e) {
		refused.push(`${n}: ${e.message}`);
	}
}
const sendRange = async (url, from, to) => {
	for (let n = from; n <= to; n++) await send(url, n);
};

const daemon = receivingDaemon({ service: 'workers', queue: 'chat-messages', port });
await daemon.start();
const client = watcher({ port, chats: [CHAT], name: 'ha-pg-client' });
await waitUntil('the client to connect', () => client.socket.connected, 10000);
const shownAll = () => [...saved.values()].every((id) => client.seen.some((m) => m.id === id));

await sendRange(primaryUrl, 1, 10);
await waitUntil('messages 1-10 to be shown', shownAll, 30000);
await waitUntil("the standby's relay to say standby", async () => (await relayState(standbyUrl)) === 'standby', 10000);
say('messages 1-10 shown; the standby relay says standby');

// in doubt, and committed: the same primary comes back with the commit in its WAL
const inDoubt = { url: primaryUrl, chat: CHAT, stopStandby: env('PG_STOP_STANDBY'), killPrimary: env('PG_STOP_PRIMARY'), query };
const errorA = await commitInDoubt({ ...inDoubt, body: 'in doubt A' });
say(`"in doubt A": the primary killed while its COMMIT waited for the standby; the sender saw: ${errorA}`);
execSync(env('PG_START_PRIMARY'), { stdio: 'ignore' });
const foundA = await findSent({ ...inDoubt, body: 'in doubt A' });
execSync(env('PG_START_STANDBY'), { stdio: 'ignore' });
say(`the primary started again; the lookup finds "in doubt A" ${foundA.length} time(s); the standby follows again`);
if (foundA.length === 1) {
	saved.set(10.5, foundA[0]); // committed: it must be shown once, between 10 and 11
	byId.set(foundA[0], 10.5);
}
await waitUntil('"in doubt A" to be shown', shownAll, 30000).catch((e) => say(e.message));

await query(primaryUrl, 'ALTER SYSTEM SET chat_outbox.relay_enabled = off');
await query(primaryUrl, 'SELECT pg_reload_conf()');
await waitUntil("the primary's relay to pause", async () => (await relayState(primaryUrl)) === 'paused', 10000);
await sendRange(primaryUrl, 11, 20);
say('messages 11-20 committed on the primary, not relayed');

// in doubt, and not committed: the standby, which never got B's commit record, is promoted
const errorB = await commitInDoubt({ ...inDoubt, body: 'in doubt B' });
say(`"in doubt B": the primary killed while its COMMIT waited for the standby; the sender saw: ${errorB}`);
execSync(env('PG_START_STANDBY'), { stdio: 'ignore' });
say('the standby started again without it');
// a client sends through the gateway during the failover: each send is acked committed or refused
const gatewaySends = [];
for (let i = 1; i <= 10; i++) {
	gatewaySends.push(client.socket.timeout(30000).emitWithAck('send', { chat_id: CHAT, body: `gateway ${i}` })
		.catch((e) => ({ noAck: String(e) })));
	await sleep(30);
}
await send(primaryUrl, 21);
execSync(env('PG_PROMOTE_STANDBY'), { stdio: 'ignore' });
say('standby promoted');
await waitUntil("the new primary's relay to run", async () => (await relayState(standbyUrl)) === 'running', 15000);
say('the new primary relays');
const foundB = await findSent({ ...inDoubt, url: standbyUrl, body: 'in doubt B' });
say(`the lookup finds "in doubt B" ${foundB.length} time(s) on the new primary; the sender sends it again`);
const [{ id: resentB }] = await query(standbyUrl, 'SELECT id FROM consumers.send_message($1, $2)', [CHAT, 'in doubt B']);
saved.set(21.5, resentB);
byId.set(resentB, 21.5);
await sendRange(standbyUrl, 22, 30);

await waitUntil('every committed message to be shown', shownAll, 40000).catch((e) => say(e.message));
await waitUntil('the outbox to drain', async () => (await query(standbyUrl,
	'SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL'))[0].n === 0, 20000).catch((e) => say(e.message));
await sleep(500); // a late duplicate would show up here

const verdict = shownOnce({ saved, byId, seen: client.seen });
const [{ unsent }] = await query(standbyUrl, 'SELECT count(*)::int AS unsent FROM consumers.outbox WHERE sent_at IS NULL');
const acks = await Promise.all(gatewaySends);
const ackedIds = acks.filter((a) => a.ok).map((a) => a.message.id);
const [{ kept }] = await query(standbyUrl, 'SELECT count(*)::int AS kept FROM workers.messages WHERE id = ANY($1::uuid[])', [ackedIds]);
const unanswered = acks.filter((a) => !a.ok && !a.error);
say(`gateway sends during the failover: ${ackedIds.length} committed (${kept} found on the new primary), ` +
	`${acks.length - ackedIds.length - unanswered.length} refused with an error, ${unanswered.length} without an answer`);
say(`committed ${saved.size}, refused ${refused.length}, ${verdict.text}; unsent: ${unsent}`);

client.socket.close();
await daemon.stop('SIGTERM');

const failures = [];
if (foundA.length !== 1) failures.push(`"in doubt A" found ${foundA.length} times after the primary's restart, expected once`);
if (foundB.length !== 0) failures.push(`"in doubt B" found ${foundB.length} times on the promoted standby, expected never`);
const shownB = client.seen.filter((m) => m.body === 'in doubt B').map((m) => m.id);
if (shownB.some((id) => id !== resentB)) failures.push('"in doubt B" of the lost commit was shown');
if (saved.size !== 31) failures.push(`committed ${saved.size} sends, expected 31 (1-20, in doubt A, in doubt B resent, 22-30)`);
if (refused.length !== 1 || !refused[0].startsWith('21:')) failures.push(`refused sends: ${refused.join('; ') || 'none'} (expected 21 only)`);
failures.push(...verdict.failures);
if (unanswered.length) failures.push(`gateway sends without an ack or an error: ${JSON.stringify(unanswered)}`);
if (kept !== ackedIds.length) failures.push(`gateway sends acked committed but missing on the new primary: ${ackedIds.length - kept}`);
if (unsent) failures.push(`${unsent} rows unsent`);
finish(failures);
