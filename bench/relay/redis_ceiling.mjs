// bench/relay/redis_ceiling.mjs <redis_port> [jobs] [in_flight] [batch] [pace_ms] - how fast this Redis
// can take the relay's own batch-add calls when nothing else limits it: the calls (`batch` jobs each,
// 500) are built before the clock starts, and `in_flight` (2) of them are always queued, so Redis
// never waits for a client. No relay drains faster than this on the same machine; run.sh prints it
// beside the drain rate. With a pace, each lane waits that long after each reply, as the relay does
// between passes while commits stream in: what small batches cost Redis per job.
// Jobs go to a queue of their own for each run (`ceiling-<time>`), so none is a duplicate.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { batchCalls, redisCpuSeconds, scriptVersion } from './batches.mjs';

const IORedis = createRequire(new URL('../../tests/package.json', import.meta.url))('ioredis');
const JOBS = Number(process.argv[3] || 100000), IN_FLIGHT = Number(process.argv[4] || 2);
const BATCH = Number(process.argv[5] || 500), PACE_MS = Number(process.argv[6] || 0);
const redis = new IORedis(Number(process.argv[2]));
const script = fileURLToPath(new URL('../../common/relay/lua/batch_add.lua', import.meta.url));

const calls = batchCalls(await scriptVersion(redis, script), JOBS, BATCH, `ceiling-${Date.now()}`);
const c0 = await redisCpuSeconds(redis), t0 = process.hrtime.bigint();
let next = 0;
const lane = async () => {
	while (next < calls.length) {
		await redis.evalsha(...calls[next++]);
		if (PACE_MS) await new Promise((r) => setTimeout(r, PACE_MS));
	}
};
await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
const ms = Number(process.hrtime.bigint() - t0) / 1e6, cpu = (await redisCpuSeconds(redis)) - c0;
console.log(`redis alone, the relay's script pre-encoded, ${IN_FLIGHT} calls in flight, ${BATCH} jobs each${PACE_MS ? `, ${PACE_MS} ms apart` : ''}: ${JOBS} jobs in ${Math.round(ms)} ms = ` +
	`${Math.round(JOBS * 1000 / ms)} jobs/s; redis ${(cpu * 1e6 / JOBS).toFixed(1)} us/job, busy ${Math.round(cpu * 100000 / ms)}%`);
redis.disconnect();
