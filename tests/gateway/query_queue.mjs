// tests/gateway/query_queue.mjs - the bound on the gateway's queries waiting for Postgres
// (--query-queue 3, see memory_bounds.sh): sends over it are acked {code:"busy"}, a replay waits.
import { spawn } from 'node:child_process';
import { check, finish, messagesOf, metric, sioClient, sql, token, waitFor, wsClient } from './peer_lib.mjs';

const waiting = () => metric('chat_outboxd_gateway_queries_waiting');
const seqs = sql(`INSERT INTO workers.inbox (message_id, chat_id, body, created_at)
	SELECT gen_random_uuid(), 31, 'q-' || i, now() FROM generate_series(1, 5) i RETURNING seq`).split('\n').map(Number);

const sender = sioClient({ transports: ['websocket'], auth: { token: token([31]) } });
await waitFor('sender connects', () => sender.connected);
// A session that holds both tables the gateway's queries need until it is told to end.
const holder = spawn('psql', ['-XAtq', '-v', 'ON_ERROR_STOP=1', process.env.PGURL], { stdio: ['pipe', 'inherit', 'inherit'] });
holder.stdin.write('BEGIN; LOCK TABLE workers.inbox, workers.messages IN ACCESS EXCLUSIVE MODE; SELECT 1;\n');
await waitFor('the lock', () => sql(`SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'workers.messages'::regclass AND granted`) === '1');

const acks = [];
for (let i = 0; i < 5; i++)
	sender.timeout(30000).emitWithAck('send', { chat_id: 31, body: `held-${i}` }).then((a) => acks.push({ i, a }), (e) => acks.push({ i, e: String(e) }));
await waitFor('two busy acks', () => acks.length >= 2, 5000);
check('sends beyond --query-queue are acked busy at once', acks.length === 2 &&
	acks.every(({ a }) => a?.ok === false && a.error?.code === 'busy'), JSON.stringify(acks));
check('three queries wait for Postgres', await waiting() === 3, String(await waiting()));
// A replay asked for now waits for a slot.
const w = wsClient(`?token=${token([31])}&since=${seqs[0] - 1}`);
await waitFor('welcome', () => w.frames.length > 0);
check('the replay waits while the queue is full', messagesOf(w).length === 0 && !w.closed, JSON.stringify(w.frames));

holder.stdin.end('COMMIT;\n');
await waitFor('the held sends', () => acks.length === 5, 20000);
check('the sends that were queued are stored once Postgres answers',
	acks.filter(({ a }) => a?.ok === true).map(({ a }) => a.message.body).sort().join() === 'held-0,held-1,held-2', JSON.stringify(acks));
await waitFor('the replay', () => messagesOf(w).length >= 5, 20000);
check('the replay that waited delivers every row in order',
	messagesOf(w).map((m) => m.body).join() === 'q-1,q-2,q-3,q-4,q-5', messagesOf(w).map((m) => m.body).join());
check('nothing waits any more', await waiting() === 0, String(await waiting()));
w.close();
sender.close();
finish();
