// tests/gateway/join_storm.mjs - joins that scale (docs/gateway.md "Joins in a storm"), against one daemon
// started by join_storm.sh with --catchup-limit 5 on a cluster that logs every statement:
//  - 60 members of one chat (45 /ws, 15 Socket.IO) resume at once from cursors all over its 30 messages, while the
//    inbox is locked so the first reads wait and every other join queues behind them; 20 of them join after the
//    first reads went out, live messages are sent while the reads wait and after: each socket is shown exactly
//    the chat's messages above its cursor, once each, in seq order, nothing missed between catch-up and live;
//  - each socket's chat_state carries its own user's cursor and unread count (users with a cursor, without, and
//    a user of two sockets);
//  - the database ran a handful of catch-up page reads and chat_state unread reads for them all (counted in the
//    cluster's statement log), where one read per socket would have been 60 of each and more.
import { readFileSync, statSync } from 'node:fs';
import pg from 'pg';
import { check, finish, insertInbox, messagesOf, metric, sioClient, sql, token, waitFor, wsClient } from './peer_lib.mjs';

const CHAT = 42, FIRST = 40, LATER = 20, OLD = 30;
const log = `${process.env.H_DIR}/postgres.log`;
const logFrom = statSync(log).size;

const old = insertInbox(CHAT, Array.from({ length: OLD }, (_, i) => `old-${i}`), 'ann');
// users u0-u9 read up to the 10th message, u10-u19 up to the 20th; the rest never read
sql(`SELECT workers.mark_read(${CHAT}, 'u' || i, CASE WHEN i < 10 THEN ${old[9]} ELSE ${old[19]} END) FROM generate_series(0, 19) i`);
const cursorOf = (u) => (u < 10 ? old[9] : u < 20 ? old[19] : null);

const members = [];
// member k: user u<k> (k 55 is user u5 again: one user, two sockets), resuming after `since`
function join(k) {
	const user = k === 55 ? 5 : k;
	const since = k % 3 === 0 ? 0 : old[(k * 7) % OLD];
	const tok = token([CHAT], { sub: `u${user}` });
	const m = { k, user, since, sio: k % 4 === 3 };
	if (m.sio) {
		m.s = sioClient({ transports: ['websocket'], auth: { token: tok, since } });
		m.states = [];
		m.s.on('chat_state', (d) => m.states.push(d));
		m.welcomed = () => m.s.connected;
		m.messages = () => m.s.messages;
		m.chatStates = () => m.states;
	} else {
		m.w = wsClient(`?token=${tok}&since=${since}`);
		m.welcomed = () => m.w.frames[0]?.type === 'welcome';
		m.messages = () => messagesOf(m.w);
		m.chatStates = () => m.w.frames.filter((f) => f.type === 'chat_state');
	}
	members.push(m);
	return m;
}

// The inbox locked: the first catch-up read and unread read wait in Postgres, every join after them waits in line.
const locker = new pg.Client({ connectionString: process.env.PGURL });
await locker.connect();
await locker.query('BEGIN');
await locker.query('LOCK TABLE workers.inbox IN ACCESS EXCLUSIVE MODE');
const first = Array.from({ length: FIRST }, (_, k) => join(k));
await waitFor('the first 40 welcomed', () => first.every((m) => m.welcomed()), 30000);
const waitingReads = () => Number(sql(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ANY ($1::bigint[]) AND seq%'`));
await waitFor('a catch-up read waiting on the locked inbox', () => waitingReads() >= 1, 20000, 100);
for (const b of ['live-a1', 'live-a2', 'live-a3'])
	sql(`SELECT consumers.send_message(${CHAT}, '${b}')`);
// joining while the catch-up reads are out
const later = Array.from({ length: LATER }, (_, k) => join(FIRST + k));
await waitFor('the later 20 welcomed', () => later.every((m) => m.welcomed()), 30000);
await locker.query('ROLLBACK');
await locker.end();
for (const b of ['live-b1', 'live-b2', 'live-b3'])
	sql(`SELECT consumers.send_message(${CHAT}, '${b}')`);
await waitFor('the 6 live messages stored', () => Number(sql(`SELECT count(*) FROM workers.inbox WHERE chat_id = ${CHAT}`)) === OLD + 6, 30000, 100);
// a last live message: a socket shown it has ended its replay (live messages wait for it), so all it was shown before is final
sql(`SELECT consumers.send_message(${CHAT}, 'end')`);
await waitFor('every socket shown the last message', () => members.every((m) => m.messages().some((x) => x.body === 'end')), 60000, 100);

const inbox = sql(`SELECT seq || ' ' || body FROM workers.inbox WHERE chat_id = ${CHAT} ORDER BY seq`).split('\n').map((l) => {
	const [seq, ...body] = l.split(' ');
	return { seq: Number(seq), body: body.join(' ') };
});
let wrong = 0, detail = '';
for (const m of members) {
	const want = inbox.filter((x) => x.seq > m.since).map((x) => x.body).join();
	const got = m.messages().map((x) => x.body).join();
	if (want !== got) {
		wrong++;
		detail ||= `member ${m.k} (${m.sio ? 'Socket.IO' : '/ws'}) since ${m.since}: want ${want} got ${got}`;
	}
}
check('every socket shown exactly the messages above its cursor, once each, in order, then the live ones', wrong === 0, detail);
check('the later joiners and the live messages sent during the reads included',
	later.every((m) => m.messages().some((x) => x.body === 'live-a1')) && members.every((m) => m.messages().some((x) => x.body === 'live-b3')));

let badState = 0, stateDetail = '';
for (const m of members) {
	const states = m.chatStates().filter((s) => s.chat_id === CHAT);
	const cursor = cursorOf(m.user);
	const above = old.filter((s) => s > (cursor ?? 0)).length;
	const s = states[0];
	const ok = states.length === 1 && s.me?.sub === `u${m.user}` &&
		(cursor === null ? s.my_read === null : s.my_read?.seq === cursor) &&
		s.unread >= above && s.unread <= above + 6;
	if (!ok) {
		badState++;
		stateDetail ||= `member ${m.k} user u${m.user} cursor ${cursor}: ${JSON.stringify(states)}`;
	}
}
check('each socket one chat_state with its own user\'s cursor and unread count', badState === 0, stateDetail);

const statements = readFileSync(log, 'utf8').slice(logFrom).split('\n').filter((l) => /LOG: {2}(execute|statement)[^:]*: /.test(l));
const catchupReads = statements.filter((l) => l.includes('execute') && l.includes('ANY ($1::bigint[]) AND seq')).length;
const unreadReads = statements.filter((l) => l.includes('execute') && l.includes('unnest($2::text[])')).length;
const n = members.length;
console.log(`info: ${n} sockets: ${catchupReads} catch-up page reads, ${unreadReads} chat_state unread reads; /metrics: ` +
	`catch-up reads ${await metric('chat_outboxd_gateway_catchup_reads_total')} for ${await metric('chat_outboxd_gateway_catchup_read_clients_total')} clients, ` +
	`unread reads ${await metric('chat_outboxd_gateway_chat_state_reads_total')} for ${await metric('chat_outboxd_gateway_chat_state_read_joins_total')} joins`);
// one per socket would be at least n of each (the sockets from the start need 8 pages of 5 each)
check('catch-up read once per page for the chat, not per socket', catchupReads >= 1 && catchupReads <= 20, `${catchupReads} reads for ${n} sockets`);
check('unread counts read once per chat per round trip, not per socket', unreadReads >= 1 && unreadReads <= 6, `${unreadReads} reads for ${n} sockets`);
for (const m of members) m.sio ? m.s.close() : m.w.close();
finish();
