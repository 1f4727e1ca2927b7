// tests/extension/batch_add_script.mjs <redis_port> - the relay's batch-add script against a real
// Redis, without Postgres: its text is read from its sources (tests/harness/batch_add_lua.mjs) and called
// as the relay calls it. What it must do: add new jobs, call a job a duplicate only when it is in one
// of the queue's states, replace a hash no state holds, refuse one job whose key is not a hash (the
// others go on), refuse a whole batch when a queue key has the wrong type, refuse it when the layout
// key holds something else than the call expects, and when the relay's mark is not the one it expects,
// leaving Redis as it was in each case; write the call's mark after its jobs.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';
import { readBatchAddLua } from '../harness/batch_add_lua.mjs';

const IORedis = createRequire(new URL('../package.json', import.meta.url))('ioredis');
const redis = new IORedis(Number(process.argv[2]));
const script = readBatchAddLua();
const fixed = script.match(/KEYS = ([\s\S]*?), then one job hash per job/)[1].replace(/\n--/g, ' ').split(',').map((k) => k.trim());
const sha = await redis.script('LOAD', script);

// add(queue, ids, expect, mark) runs one batch as the relay sends it and returns the script's reply.
// The queue is its service's queue here, so its layout key is bull:<queue>:partitions; expect is the
// layout expectation ('' checks nothing, 'absent', or '=' and the value); mark is [what the relay-mark
// must hold ('*' anything, '' none), the mark the call writes ('' none)].
function add(queue, ids, expect = '', mark = ['*', '']) {
	const key = (s) => `bull:${queue}:${s === 'layout' ? 'partitions' : s}`;
	const keys = [...fixed.map(key), ...ids.map(key)];
	const args = [String(Date.now()), expect, ...mark];
	for (const id of ids) args.push(id, 'message.created', JSON.stringify({ id }), `{"jobId":"${id}","attempts":0}`);
	return redis.evalsha(sha, keys.length, ...keys, ...args);
}
// snapshot: every key with its type and serialized value, to show a refused batch changed nothing
async function snapshot() {
	const keys = (await redis.keys('*')).sort();
	return Promise.all(keys.map(async (k) => [k, await redis.type(k), (await redis.dumpBuffer(k)).toString('hex')]));
}
const wait = (q) => redis.lrange(`bull:${q}:wait`, 0, -1);
const ok = (what) => console.log(`ok   ${what}`);

assert.deepEqual(await add('q', ['a1', 'a2']), [1, 1]);
assert.deepEqual(await wait('q'), ['a2', 'a1']);
assert.deepEqual(await add('q', ['a1', 'a2']), [0, 0]);
assert.deepEqual(await wait('q'), ['a2', 'a1']);
ok('new jobs added; sent again, they are duplicates (in wait) and not added twice');

await redis.multi().lrem('bull:q:wait', 0, 'a1').zadd('bull:q:completed', 1, 'a1').exec();
await redis.multi().lrem('bull:q:wait', 0, 'a2').zadd('bull:q:failed', 1, 'a2').exec();
assert.deepEqual(await add('q', ['a1', 'a2']), [0, 0]);
ok('completed and failed jobs are duplicates');

await redis.hset('bull:q:o1', 'stale', 'x', 'name', 'old');
assert.deepEqual(await add('q', ['o1']), [1]);
assert.equal(await redis.hget('bull:q:o1', 'stale'), null);
assert.equal(await redis.hget('bull:q:o1', 'name'), 'message.created');
assert.equal((await wait('q'))[0], 'o1');
ok('a hash that no state holds is no job: replaced by the job and added');

await redis.set('bull:q:s1', 'not a job');
const r = await add('q', ['s1', 'n1', 's1', 'd1', 'd1']);
assert.match(r[0], /^bull:q:s1 holds a string, not a job hash$/);
assert.deepEqual(r.slice(1), [1, r[0], 1, 0]);
assert.equal(await redis.get('bull:q:s1'), 'not a job');
assert.deepEqual((await wait('q')).filter((id) => id === 'd1' || id === 'n1' || id === 's1'), ['d1', 'n1']);
ok('a job whose key is a string is refused alone (twice in one batch: twice); one id twice in a batch is one job');

assert.deepEqual(await add('l', ['l1'], 'absent'), [1]);
await redis.set('bull:l:partitions', '2');
assert.deepEqual(await add('l', ['l2'], '=2'), [1]);
assert.deepEqual(await add('l', ['l3']), [1]);
ok('the layout key as expected (absent, or holding the expected value), or no expectation: added');
for (const [value, expect, what] of [
	['4', '=2', 'holds 4, 2 expected'],
	[null, '=1', 'absent, 1 expected (the raw value, not what absent means)'],
	['1', 'absent', 'holds 1, absent expected'],
	['02', '=2', 'holds 02, 2 expected'],
]) {
	await (value === null ? redis.del('bull:l:partitions') : redis.set('bull:l:partitions', value));
	const before = await snapshot();
	await assert.rejects(add('l', ['l4', 'l5'], expect), (e) => e.message === `CHATOUTBOX_LAYOUT ${value ?? 'nil'}`);
	assert.deepEqual(await snapshot(), before);
	ok(`layout key ${what}: the call refused with CHATOUTBOX_LAYOUT ${value ?? 'nil'}, Redis unchanged`);
}
assert.deepEqual(await wait('l'), ['l3', 'l2', 'l1']);

assert.deepEqual(await add('m', ['m1'], '', ['', 'mark-1']), [1]);
assert.equal(await redis.get('bull:m:relay-mark'), 'mark-1');
assert.deepEqual(await add('m', ['m2'], '', ['mark-1', 'mark-2']), [1]);
assert.deepEqual(await add('m', ['m2'], '', ['mark-2', 'mark-3']), [0]); // a duplicate still moves the mark
assert.deepEqual(await add('m', ['m3'], '', ['*', '']), [1]);
assert.equal(await redis.get('bull:m:relay-mark'), 'mark-3');
ok("the mark as expected (none, or the one written last), or no expectation: added, and the call's mark written after");
for (const [held, expect, what] of [
	['mark-3', 'mark-2', 'an older mark than expected (Redis lost the last call)'],
	[null, 'mark-3', 'no mark, one expected (Redis lost every mark)'],
	['mark-3', '', 'a mark, none expected'],
]) {
	await (held === null ? redis.del('bull:m:relay-mark') : redis.set('bull:m:relay-mark', held));
	const before = await snapshot();
	await assert.rejects(add('m', ['m4'], '', [expect, 'mark-4']), (e) => e.message.startsWith('CHATOUTBOX_MARK '));
	assert.deepEqual(await snapshot(), before);
	ok(`relay mark ${what}: the call refused with CHATOUTBOX_MARK, Redis unchanged`);
}
assert.deepEqual(await wait('m'), ['m3', 'm2', 'm1']);

for (const [q, what, setup] of [
	['p1', 'wait is a hash', (m) => m.hset('bull:p1:wait', 'name', 'message.created', 'data', '{}')],
	['p2', 'events is a list', (m) => m.rpush('bull:p2:events', 'x')],
	['p3', 'completed is a string, looked at for a resent job', (m) => m.set('bull:p3:completed', 'x').hset('bull:p3:r1', 'name', 'x')],
	['p4', "meta's concurrency is no number", (m) => m.hset('bull:p4:meta', 'concurrency', 'many')],
	['p5', 'the relay mark is a list', (m) => m.rpush('bull:p5:relay-mark', 'x')],
]) {
	await setup(redis.multi()).exec();
	const before = await snapshot();
	await assert.rejects(add(q, ['r1', 'r2'], '', ['*', 'y']), /BADQUEUE/);
	assert.deepEqual(await snapshot(), before);
	ok(`batch refused whole, Redis unchanged: ${what}`);
}
await redis.quit();
console.log('PASS');
