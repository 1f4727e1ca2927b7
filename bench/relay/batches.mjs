// bench/relay/batches.mjs - the relay's batch-add calls, built in Node for benchmarks that drive Redis
// without Postgres: the script text is read from common/relay/lua/batch_add.lua and the shared
// prelude common/bullmq/lua/prelude.lua (at any revision: tests/harness/batch_add_lua.mjs), and the
// fixed keys and each job's arguments are those the script's header states.
import { readBatchAddLua } from '../../tests/harness/batch_add_lua.mjs';

// scriptVersion loads the script of `file` (and `preludeFile`, by default the working tree's) into
// Redis and returns its sha and argument layout
export async function scriptVersion(redis, file, preludeFile) {
	const script = readBatchAddLua(file, preludeFile);
	const layout = /then id, name, data, opts per job/.test(script) ? 'id,name,data,opts'
		: /then name, data per job/.test(script) ? 'name,data' : null;
	if (!layout) throw new Error(`${file}: unknown argument layout`);
	const fixed = script.match(/KEYS = ([\s\S]*?), then one job hash per job/);
	if (!fixed) throw new Error(`${file}: unknown key layout`);
	const fixedKeys = fixed[1].replace(/\n--/g, ' ').split(',').map((k) => k.trim());
	// since the layout check: the timestamp is followed by the layout expectation ('' = no check)
	const expectation = /ARGV = timestamp, layout expectation,/.test(script);
	// since the marks: then the mark expectation and the new mark (each call checks the one before)
	const marks = /layout expectation, mark expectation, new mark,/.test(script);
	return { sha: await redis.script('LOAD', script), layout, fixedKeys, expectation, marks };
}

// a mark the size of the relay's (chat_outbox.relay_marks: the cursor's state as JSON)
const markOf = (b) => JSON.stringify({ made: '4401ade3-cdc0-442c-844b-10984dce182d', win_last: null, win_mpre: null,
	win_snap: null, done_mpre: 100000 + b, done_snap: `${100000 + b}:${100000 + b}:` });
const uuid = (n) => `7b0e4f5c-1111-4a2b-9c3d-${String(n).padStart(12, '0')}`;
const payload = (id, n) => JSON.stringify({ id, chat_id: n % 100, body: `backlog message ${n}`, created_at: '2026-11-30T00:00:00.123456+00:00' });

// batchCalls returns EVALSHA argument lists adding `jobs` new message jobs, `batch` per call, as the relay sends them
export function batchCalls(v, jobs, batch, queue = 'chat-messages') {
	const key = (s) => `bull:${queue}:${s === 'layout' ? 'partitions' : s}`;
	const calls = [];
	for (let b = 0; b < jobs / batch; b++) {
		const keys = v.fixedKeys.map(key), args = v.expectation ? [String(Date.now()), ''] : [String(Date.now())];
		if (v.marks)
			args.push(b === 0 ? '*' : markOf(b - 1), markOf(b));
		for (let i = 0; i < batch; i++) {
			const n = b * batch + i, id = uuid(n);
			keys.push(key(id));
			if (v.layout === 'name,data') args.push('message.created', payload(id, n));
			else args.push(id, 'message.created', payload(id, n), `{"jobId":"${id}","attempts":0}`);
		}
		calls.push([v.sha, keys.length, ...keys, ...args]);
	}
	return calls;
}

// redisCpuSeconds is Redis' own CPU time (user + system) from INFO
export async function redisCpuSeconds(redis) {
	const info = await redis.info('cpu');
	const get = (k) => Number(info.match(new RegExp(`${k}:([0-9.]+)`))[1]);
	return get('used_cpu_user') + get('used_cpu_sys');
}
