// tests/extension/consume.mjs <file> - a real bullmq Worker on chat-messages that appends each
// processed job id to <file>, until SIGTERM. It rides out Redis restarts like any bullmq Worker.
// Env: REDIS_URL.
import { appendFileSync } from 'node:fs';
import { Worker } from 'bullmq';
import IORedis from 'ioredis';

const connection = new IORedis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
connection.on('error', () => {});
const worker = new Worker('chat-messages', async (job) => {
	appendFileSync(process.argv[2], `${job.id}\n`);
}, { connection, concurrency: 1 });
worker.on('error', () => {});
process.on('SIGTERM', async () => { await worker.close(true); process.exit(0); });
