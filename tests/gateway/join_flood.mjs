// tests/gateway/join_flood.mjs - one client's join/leave flood never fills the gateway's queries for the
// others (--query-queue 3, see memory_bounds.sh). Each join costs the gateway a presence script in Redis
// and a Postgres lookup for its chat_state; here Postgres holds those lookups (a lock on read_cursors),
// so they pile up as they would on a slow database. The flood's joins and leaves over the rate are
// acked rate_limited, the joins' lookups leave room in the queue (a chat_state then goes without its
// unread count), and another client's send is queued and stored, not acked busy.
import { spawn } from 'node:child_process';
import { check, finish, metric, sioClient, sql, token, waitFor, wsClient } from './peer_lib.mjs';

const holder = spawn('psql', ['-XAtq', '-v', 'ON_ERROR_STOP=1', process.env.PGURL], { stdio: ['pipe', 'inherit', 'inherit'] });
holder.stdin.write('BEGIN; LOCK TABLE workers.read_cursors IN ACCESS EXCLUSIVE MODE; SELECT 1;\n');
await waitFor('the lock', () => sql(`SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'workers.read_cursors'::regclass AND granted`) === '1');

const flooder = sioClient({ transports: ['websocket'], auth: { token: token([51], { sub: 'flooder' }) } });
const other = sioClient({ transports: ['websocket'], auth: { token: token([52], { sub: 'other' }) } });
await waitFor('both connect', () => flooder.connected && other.connected);

const acks = [];
for (let i = 0; i < 100; i++) {
	flooder.timeout(30000).emitWithAck('leave', { chat_id: 51 }).then((a) => acks.push(a), (e) => acks.push({ e: String(e) }));
	flooder.timeout(30000).emitWithAck('join', { chat_id: 51 }).then((a) => acks.push(a), (e) => acks.push({ e: String(e) }));
}
await waitFor('the flood answered', () => acks.length === 200, 20000);
const limited = acks.filter((a) => a?.error === 'rate_limited');
check('joins and leaves over the rate are acked rate_limited (with retry_after_ms)',
	limited.length > 0 && limited.every((a) => a.retry_after_ms > 0) && acks.every((a) => a?.ok === true || a?.error === 'rate_limited'),
	`${limited.length} rate_limited of ${acks.length}: ${JSON.stringify(acks.slice(-2))}`);
const waiting = await metric('chat_outboxd_gateway_queries_waiting');
check('the flood leaves room in the query queue', waiting < 3, `${waiting} queries waiting`);
// The send waits behind the held lookups on the gateway's one Postgres connection, like any query.
const sending = other.timeout(20000).emitWithAck('send', { chat_id: 52, body: 'beside the flood' });
// The same rate on /ws: error frames with the code, beside the acks.
const w = wsClient(`?token=${token([53], { sub: 'ws-flooder' })}`);
await waitFor('welcome', () => w.frames.length > 0);
for (let i = 0; i < 60; i++) w.send(JSON.stringify({ type: i % 2 ? 'join' : 'leave', ref: i, chat_id: 53 }));
const answers = () => w.frames.filter((f) => typeof f.ref === 'number');
await waitFor('the /ws flood answered', () => answers().length === 60, 20000);
const wsLimited = answers().filter((f) => f.type === 'error' && f.error?.code === 'rate_limited' && f.error.retry_after_ms > 0);
check('/ws: joins and leaves over the rate get rate_limited error frames',
	wsLimited.length > 0 && answers().every((f) => f.type === 'ack' || wsLimited.includes(f)) && !w.closed,
	`${wsLimited.length} of 60: ${JSON.stringify(answers().slice(-1))}`);
w.close();

holder.stdin.end('COMMIT;\n');
const sent = await sending;
check('another client\'s send is stored, not acked busy', sent?.ok === true, JSON.stringify(sent));
await waitFor('the lookups drain', async () => await metric('chat_outboxd_gateway_queries_waiting') === 0, 20000);
flooder.close();
other.close();
finish();
