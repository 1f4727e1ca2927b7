// tests/extension/redis_tls_worker.mjs - a real bullmq Worker on a TLS connection (ioredis' tls
// options, the test's own CA), for redis_tls.sh: it works chat-messages and writes one line per
// job processed, "<job id> <chat id> <body>", to $OUT, until it has seen $EXPECT jobs (then it
// closes and exits 0). Env: REDIS_PORT, TLS_CA, OUT, EXPECT.
import fs from 'node:fs';
import { Worker } from 'bullmq';
import IORedis from 'ioredis';
import { env } from '../harness/check.mjs';

const expect = Number(env('EXPECT'));
const out = fs.openSync(env('OUT'), 'a');
const connection = new IORedis({
	host: 'localhost', port: Number(env('REDIS_PORT')), maxRetriesPerRequest: null,
	tls: { ca: fs.readFileSync(env('TLS_CA')), servername: 'localhost' },
	retryStrategy: () => 200, // the suite restarts Redis with another certificate: keep coming back
});
connection.on('error', () => {}); // refused handshakes while Redis shows a bad certificate
let seen = 0;
const worker = new Worker('chat-messages', async (job) => {
	fs.writeSync(out, `${job.id} ${job.data.chat_id} ${job.data.body}\n`);
	if (++seen >= expect) setImmediate(async () => { await worker.close(); process.exit(0); });
}, { connection, concurrency: 1 });
worker.on('error', () => {});
