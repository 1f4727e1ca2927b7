// bench/relay/redis_ceiling.mjs <redis_port> [jobs] [in_flight] - how fast this Redis can take the relay's
// own batch-add calls when nothing else limits it: the calls are built before the clock starts, and
// `in_flight` (2) of them are always queued, so Redis never waits for a client. No relay, whatever
// it does, drains faster than this on the same machine; run.sh prints it beside the drain rate.
// Jobs go to a queue of their own for each run (`ceiling-<time>`), so none is a duplicate.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { batchCalls, redisCpuSeconds, scriptVersion } from './batches.mjs';

const IORedis = createRequire(new URL('../../tests/package.json', import.meta.url))('ioredis');
const JOBS = Number(process.argv[3] || 100000), IN_FLIGHT = Number(process.argv[4] || 2), BATCH = 500;
const redis = new IORedis(Number(process.argv[2]));
const script = fileURLToPath(new URL('../../extension/src/core/bullmq_batch_add.cpp', import.meta.url));

const calls = batchCalls(await scriptVersion(redis, script), JOBS, BATCH, `ceiling-${Date.now()}`);
const c0 = await redisCpuSeconds(redis), t0 = process.hrtime.bigint();
let next = 0;
const lane = async () => { while (next < calls.length) await redis.evalsha(...calls[next++]); };
await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
const ms = Number(process.hrtime.bigint() - t0) / 1e6, cpu = (await redisCpuSeconds(redis)) - c0;
console.log(`redis alone, the relay's script pre-encoded, ${IN_FLIGHT} calls in flight: ${JOBS} jobs in ${Math.round(ms)} ms = ` +
	`${Math.round(JOBS * 1000 / ms)} jobs/s; redis ${(cpu * 1e6 / JOBS).toFixed(1)} us/job, busy ${Math.round(cpu * 100000 / ms)}%`);
redis.disconnect();
