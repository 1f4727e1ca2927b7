// tests/consumer/crash_never_fails.mjs - a consumer crashing while it holds a message delays the
// message, never fails it.
//
// The same job is held by two daemons in turn that are SIGKILLed right after its inbox write
// (--crash-after-inbox 1), each started under another identity (a pod restarted on another host),
// so the next holder of the queue's lease takes the job back, twice, with --max-stalled-count 1
// (each start counts in the job's `ats`, as BullMQ counts attempts started). A second job
// carries the mark a bullmq Worker's stalled check leaves on a job past its own limit (`defa`).
// A third daemon must store, push and complete both; nothing may reach the failed set.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { io } from 'socket.io-client';
import { env, postgres, receivingDaemon } from '../faults/procs.mjs';
import { check, finish, waitUntil as waitFor } from '../harness/check.mjs';
import { token as signFor } from '../harness/jwt.mjs';

const QUEUE = 't-crash-twice';
const CHAT = 9;
const url = new URL(env('REDIS_URL'));
const connection = { host: url.hostname, port: Number(url.port) };
const queue = new Queue(QUEUE, { connection });
const redis = new IORedis(connection);
const FAST = ['--lock-duration', '1000', '--stalled-interval', '1000', '--max-stalled-count', '1', '--batch-size', '1',
	'--lease-ttl', '1000'];
const daemon = receivingDaemon({ service: 'workers', queue: QUEUE, port: Number(env('DAEMON_PORT')), extra: FAST });

const job = (id, body) => ({ name: 'message.created', opts: { jobId: id },
	data: { id, chat_id: CHAT, body, created_at: new Date().toISOString() } });

const held = randomUUID();
const marked = randomUUID();
await queue.add('message.created', job(held, 'held by two crashing daemons').data, { jobId: held });
const exited = () => Promise.race([daemon.exited,
	new Promise((resolve) => setTimeout(() => resolve({ timeout: '30 s' }), 30000).unref())]);

daemon.start(['--identity', 'pod-a', '--crash-after-inbox', '1']).catch(() => {}); // it dies before it may answer
// A client that resumes from the last seq it was shown, as an app does, across the restarts.
const client = { seen: [] };
const token = signFor([CHAT], { sub: 'client' });
client.socket = io(`http://127.0.0.1:${daemon.port}`, { reconnectionDelay: 100, reconnectionDelayMax: 300,
	auth: (cb) => cb({ token, offset: client.seen.length ? client.seen[client.seen.length - 1].seq : 0 }) });
client.socket.on('message', (m) => client.seen.push(m));
let r = await exited();
check('first daemon SIGKILLed itself after the inbox write', r.signal === 'SIGKILL', JSON.stringify(r));

daemon.start(['--identity', 'pod-b', '--crash-after-inbox', '1']).catch(() => {});
r = await exited();
check('second daemon took the job back and SIGKILLed itself after the inbox write', r.signal === 'SIGKILL',
	JSON.stringify(r));
const ats = Number(await redis.hget(`bull:${QUEUE}:${held}`, 'ats'));
check('the job was started twice so far', ats === 2, `ats ${ats}`);
await queue.add('message.created', job(marked, 'marked by a bullmq stalled check').data, { jobId: marked });
await redis.hset(`bull:${QUEUE}:${marked}`, 'defa', 'job stalled more than allowable limit');

await daemon.start(['--identity', 'pod-c']);
await waitFor('both jobs finished', async () => {
	const c = await queue.getJobCounts();
	return c.completed + c.failed === 2;
}, 30000);
const counts = await queue.getJobCounts();
check('nothing in the failed set', counts.failed === 0 && counts.completed === 2, JSON.stringify(counts));
const started = Number(await redis.hget(`bull:${QUEUE}:${held}`, 'ats'));
check('the held job was started three times', started === 3, `ats ${started}`);
const rows = await postgres.query('SELECT message_id::text AS id FROM workers.inbox WHERE chat_id = $1 ORDER BY seq', [CHAT]);
check('both messages in the inbox', rows.length === 2 && rows.some((x) => x.id === held) && rows.some((x) => x.id === marked),
	JSON.stringify(rows));
await waitFor('the client shown both', () => client.seen.length >= 2, 10000).catch(() => {});
const shown = client.seen.map((m) => m.id);
check('the client was shown each once, in seq order', shown.length === 2 && shown[0] === rows[0]?.id && shown[1] === rows[1]?.id,
	JSON.stringify(shown));

client.socket.close();
await daemon.stop();
await queue.close();
redis.disconnect();
finish();
