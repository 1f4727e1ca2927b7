// tests/extension/consume.mjs <file> [<duplicated file>] - a real bullmq Worker on chat-messages
// that appends each processed job id to <file> (and to <file>.retaken when the stalled check moved it
// back), until SIGTERM. It rides out Redis restarts like any bullmq Worker. With <duplicated file>, a QueueEvents reading the events stream from its start
// appends the jobId of every `duplicated` event there: a batch the relay sent twice shows up only
// that way, since BullMQ never makes a second job of it. Prints "ready" once both are listening.
// Env: REDIS_URL.
import { appendFileSync } from 'node:fs';
import { QueueEvents, Worker } from 'bullmq';
import IORedis from 'ioredis';

const connection = new IORedis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
connection.on('error', () => {});
// A job the Worker took and then lost with its connection (a Redis stop) is moved back by the stalled
// check and processed after jobs queued behind it: a bullmq Worker's own behaviour, so such job ids
// also go to <file>.retaken, for an order check to leave out.
const worker = new Worker('chat-messages', async (job) => {
	appendFileSync(process.argv[2], `${job.id}\n`);
	if (job.stalledCounter > 0) appendFileSync(`${process.argv[2]}.retaken`, `${job.id}\n`);
}, { connection, concurrency: 1 });
worker.on('error', () => {});
let events = null;
if (process.argv[3]) {
	appendFileSync(process.argv[3], '');
	events = new QueueEvents('chat-messages', { connection: connection.duplicate(), lastEventId: '0-0' });
	events.on('error', () => {});
	events.on('duplicated', ({ jobId }) => appendFileSync(process.argv[3], `${jobId}\n`));
	await events.waitUntilReady();
}
await worker.waitUntilReady();
console.log('ready');
process.on('SIGTERM', async () => { await Promise.all([worker.close(true), events?.close()]); process.exit(0); });
