// tests/extension/partition_workers.mjs <file> <queue> <max partitions> - real bullmq Workers on
// every queue a service may have: <queue> (one partition) and <queue>-p0 .. -p<max-1>, each on its
// shard (partition mod shards, the rule of common/partitions.hpp; <queue> is partition 0's).
// Appends "<queue> <shard> <chat_id> <body>" per processed job, in processing order, until SIGTERM.
// Prints "ready" once every worker listens. Env: SHARD_URLS, the relay's whitespace-separated list.
import { appendFileSync } from 'node:fs';
import { Worker } from 'bullmq';
import IORedis from 'ioredis';

const [file, queue, maxText] = process.argv.slice(2);
const shards = process.env.SHARD_URLS.trim().split(/\s+/);
const workers = [];
const start = (name, shard) => {
	const connection = new IORedis(shards[shard], { maxRetriesPerRequest: null });
	connection.on('error', () => {});
	const w = new Worker(name, async (job) => {
		appendFileSync(file, `${name} ${shard} ${job.data.chat_id} ${job.data.body}\n`);
	}, { connection, concurrency: 1 });
	w.on('error', () => {});
	workers.push(w);
};
start(queue, 0);
for (let p = 0; p < Number(maxText); p++) start(`${queue}-p${p}`, p % shards.length);
await Promise.all(workers.map((w) => w.waitUntilReady()));
console.log('ready');
process.on('SIGTERM', async () => { await Promise.all(workers.map((w) => w.close(true))); process.exit(0); });
