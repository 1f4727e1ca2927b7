// tests/ha/redis_failover.mjs - the Redis master dies while the only replica is behind.
//
// Real processes: a sender calling consumers.send_message, the relay in Postgres writing through
// redis-sentinel:// with chat_outbox.redis_min_replicas (1 in CTest), chat-outboxd (workers)
// reading through the same URL, and a socket.io client counting what it is shown (traffic.mjs).
//   1. messages 1-10 flow normally;
//   2. the receiver's queue is paused (so jobs wait in Redis as under a backlog), the replica is
//      stopped (SIGSTOP) and its link closed: messages 11-20 reach the master alone;
//   3. the master is SIGKILLed, the replica resumes, Sentinel promotes it; messages 21-25 are sent
//      during the failover;
//   4. the old master starts again (Sentinel makes it the new master's replica), the queue is
//      resumed, messages 26-30 are sent.
// With min_replicas 1 the relay never committed 11-20 as sent (WAIT found no replica), so it sends
// them again to the new master. Fails if a message is lost, shown twice or out of order, or if an
// outbox row stays unsent.
import { execSync } from 'node:child_process';
import { postgres, sleep, env, waitUntil } from '../faults/procs.mjs';
import { startDirection } from './traffic.mjs';
import { finish } from './verdict.mjs';

const CHAT = 31;
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const sh = (cmd) => execSync(cmd, { encoding: 'utf8' }).trim();
const redisCli = (p, args) => sh(`redis-cli -p ${p} ${args}`);
const masterPort = () => Number(sh(env('SENTINEL_MASTER_CMD')).split('\n')[1]);
const META = 'bull:chat-messages:meta';

const side = await startDirection({ direction: 'consumers->workers', port: Number(env('DAEMON_PORT')), chat: CHAT });
const { saved } = side;
const sendRange = async (from, to) => {
	for (let n = from; n <= to; n++) {
		await side.send(n);
		await sleep(50);
	}
};

await sendRange(1, 10);
await waitUntil('messages 1-10 to be shown', () => side.shownUpTo(10), 30000);
say('messages 1-10 shown');

const oldMaster = Number(env('REDIS_PORT'));
const replica = Number(env('REPLICA_PORT'));
redisCli(oldMaster, `HSET ${META} paused 1`);
redisCli(oldMaster, 'WAIT 1 2000');
sh(`kill -STOP $(cat ${env('REPLICA_PIDFILE')})`);
// and its link closed: what the master writes from now on stays in the master alone (a stopped
// replica would still find it in its socket buffer when it resumes)
redisCli(oldMaster, 'CLIENT KILL TYPE replica');
say('queue paused, replica stopped and cut off');
await sendRange(11, 20);
// the relay ran the batch on the master (whatever it then committed): the job hash is there
await waitUntil('message 20 to reach the master', () => redisCli(oldMaster, `EXISTS bull:chat-messages:${saved.get(20)}`) === '1', 20000);
say('messages 11-20 are on the master alone');

sh(`kill -9 $(cat ${env('REDIS_PIDFILE')})`);
sh(`kill -CONT $(cat ${env('REPLICA_PIDFILE')})`);
say('master SIGKILLed, replica resumed');
await sendRange(21, 25);
await waitUntil('Sentinel to promote the replica', () => masterPort() === replica, 30000);
say('replica promoted');
execSync(env('MASTER_START'));
redisCli(replica, `HDEL ${META} paused`);
say('old master started again, queue resumed');
await sendRange(26, 30);

await waitUntil('every message to be shown', () => side.shownUpTo(Infinity), 60000).catch((e) => say(e.message));
await waitUntil('the outbox to drain', async () => (await postgres.query(
	'SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL'))[0].n === 0, 20000).catch((e) => say(e.message));
await sleep(500); // a late duplicate would show up here

const verdict = await side.verdict();
for (const line of verdict.lines) say(line);
await side.stop();

const failures = [];
if (saved.size !== 30) failures.push(`saved ${saved.size} of 30`);
failures.push(...verdict.failures);
finish(failures);
