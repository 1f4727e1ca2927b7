// bench/relay/wait_jobs.mjs <redis_port> <list key> <base> <jobs> [timeout_s] - times a drain from Redis'
// side: polls LLEN of the wait list every 2 ms on one connection and prints the epoch milliseconds
// when it first passed `base` and when it reached base + jobs: "first=<ms> done=<ms>". One O(1)
// command per poll, unlike a psql per poll (a backend start and a count of the backlog each time,
// which took CPU from the drain it was timing).
import { createRequire } from 'node:module';

const IORedis = createRequire(new URL('../../tests/package.json', import.meta.url))('ioredis');
const [port, key, base, jobs, timeout] = process.argv.slice(2);
const redis = new IORedis(Number(port), { retryStrategy: () => 20 });
const target = Number(base) + Number(jobs), deadline = Date.now() + Number(timeout || 300) * 1000;
let first = 0;
for (;;) {
	const n = await redis.llen(key).catch(() => -1);
	const now = Date.now();
	if (!first && n > Number(base)) first = now;
	if (n >= target) { console.log(`first=${first} done=${now}`); break; }
	if (now > deadline) { console.error(`timed out: ${key} has ${n} of ${target}`); process.exit(1); }
	await new Promise((r) => setTimeout(r, 2));
}
redis.disconnect();
