// bench/relay/script_cost.mjs <redis_port> <a.src> <b.src> [rounds] [jobs] - Redis CPU per job of two
// versions of the batch-add script (common/relay/lua/batch_add.lua at two revisions), on one
// Redis, 500 jobs per EVALSHA and one in flight, as the relay sends them; rounds alternate A B, B A, ...
// Only Redis is measured (its INFO cpu before and after), so Postgres and the relay add no noise.
// Each version's per-job arguments follow the layout its script states: "then id, name, data, opts
// per job" or "then name, data per job". ONLY=a|b runs one version once (for script_cost.sh's
// instruction counts under callgrind).
import { createRequire } from 'node:module';
import { batchCalls, redisCpuSeconds, scriptVersion } from './batches.mjs';

const IORedis = createRequire(new URL('../../tests/package.json', import.meta.url))('ioredis');
const [port, aSrc, bSrc] = process.argv.slice(2, 5);
const ROUNDS = Number(process.argv[5] || 16), JOBS = Number(process.argv[6] || 50000), BATCH = 500;
const redis = new IORedis(Number(port));

// run adds JOBS new jobs to an empty Redis and returns Redis' CPU microseconds per job
async function run(v) {
	await redis.flushall();
	const calls = batchCalls(v, JOBS, BATCH);
	const c0 = await redisCpuSeconds(redis);
	for (const call of calls) await redis.evalsha(...call);
	return ((await redisCpuSeconds(redis)) - c0) * 1e6 / JOBS;
}

// each a.src has its prelude beside it as a-prelude.src (script_cost.sh writes both)
const version = (src) => scriptVersion(redis, src, src.replace(/\.src$/, '-prelude.src'));
const a = await version(aSrc), b = await version(bSrc);
if (process.env.ONLY) {
	await run(process.env.ONLY === 'a' ? a : b);
} else {
	const as = [], bs = [];
	for (let r = 0; r < ROUNDS; r++) { // A B, B A, ...: a drift of the machine's load favours neither
		if (r % 2) bs.push(await run(b)), as.push(await run(a));
		else as.push(await run(a)), bs.push(await run(b));
	}
	const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
	const sum = (xs) => xs.reduce((x, y) => x + y, 0);
	const f = (xs) => xs.map((x) => x.toFixed(1)).join(' ');
	console.log(`redis CPU us/job: A ${f(as)} (median ${median(as).toFixed(1)})`);
	console.log(`                  B ${f(bs)} (median ${median(bs).toFixed(1)})`);
	console.log(`B/A: medians ${(median(bs) / median(as)).toFixed(3)}, totals ${(sum(bs) / sum(as)).toFixed(3)}; ` +
		`B cheaper in ${as.filter((x, i) => bs[i] < x).length} of ${ROUNDS} pairs`);
}
redis.disconnect();
