// bench/relay/bullmq_ceiling.mjs <redis_port> [jobs] - how fast real BullMQ adds jobs on this machine.
// Queue.addBulk in chunks of 500 with uuid jobIds and a message-sized payload: the reference for
// the relay's drain rate, since both write the same Redis structures per job. Env: none.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const { Queue } = require('bullmq');
const IORedis = require('ioredis');

const total = Number(process.argv[3] || 50000);
const connection = new IORedis(Number(process.argv[2]), { maxRetriesPerRequest: null });
const queue = new Queue('ceiling', { connection });
await queue.waitUntilReady();
const t = Date.now();
for (let done = 0; done < total; done += 500) {
	const jobs = Array.from({ length: 500 }, (_, i) => {
		const id = randomUUID();
		return { name: 'message.created', data: { id, chat_id: 5, body: `backlog message ${done + i}`, created_at: new Date().toISOString() }, opts: { jobId: id } };
	});
	await queue.addBulk(jobs);
}
const ms = Date.now() - t;
console.log(`bullmq addBulk: ${total} jobs in ${ms} ms = ${Math.round((total * 1000) / ms)} jobs/s`);
await queue.close();
connection.disconnect();
