// bench/ha/redis.mjs - see run.sh (mode redis).
import { execSync } from 'node:child_process';
import { pg, receiver, Sender, summary, sleep, waitUntil, env } from './common.mjs';

const FAILOVERS = Number(env('FAILOVERS'));
const MESSAGES = Number(env('MESSAGES'));
const sh = (cmd) => execSync(cmd, { encoding: 'utf8' }).trim();
const sentinels = env('SENTINEL_PORTS').split(' ');
const masterOf = (s) => Number(sh(`redis-cli -p ${s} SENTINEL get-master-addr-by-name mymaster`).split('\n')[1]);
const masterPort = () => masterOf(sentinels[0]);
// settled: every sentinel names the same master and it has both replicas back (a sentinel may still
// adopt another sentinel's later failover for a moment after the first one)
const settled = () => {
	const m = sentinels.map(masterOf);
	return m.every((p) => p === m[0]) && replicasOf(m[0]) === 2;
};
const nodeDir = (port) => `${env('H_DIR')}/redis-${port}`;
const replicasOf = (port) => Number(sh(`redis-cli -p ${port} INFO replication`).match(/connected_slaves:(\d+)/)[1]);

const { daemon, client, shown } = await receiver();
await waitUntil('the client to connect', () => client.socket.connected, 10000);
const sender = new Sender(env('PGURL'));
const admin = new pg.Client({ connectionString: env('PGURL') });
await admin.connect();
let n = 0;

// 1. latency, commit -> shown, min_replicas 0 and 1 alternating
const latency = { 0: [], 1: [] };
for (const replicas of [0, 1, 0, 1, 0, 1]) {
	await admin.query(`ALTER SYSTEM SET chat_outbox.redis_min_replicas = ${replicas}`);
	await admin.query('SELECT pg_reload_conf()');
	await sleep(1500);
	const ids = [];
	for (let i = 0; i < MESSAGES; i++) {
		const s = await sender.send(++n);
		if (s) ids.push(s.id);
		await sleep(20);
	}
	await waitUntil('the block to be shown', () => ids.every((id) => shown.has(id)), 30000);
	for (const id of ids) latency[replicas].push(shown.get(id) - sender.committed.get(id));
}
console.log(summary('commit -> shown, redis_min_replicas 0', latency[0]));
console.log(summary('commit -> shown, redis_min_replicas 1', latency[1]));

// 2. failovers under a steady sender
let sending = true;
const loop = (async () => {
	while (sending) {
		await sender.send(++n);
		await sleep(20);
	}
})();
const outage = [];
for (let round = 1; round <= FAILOVERS; round++) {
	const master = masterPort();
	const dir = nodeDir(master);
	const tKill = Date.now();
	sh(`kill -9 $(cat ${dir}/redis.pid)`);
	let first = null;
	await waitUntil('a message sent after the kill to be shown', () => {
		for (const [id, at] of sender.started)
			if (at > tKill && shown.has(id) && (first === null || shown.get(id) < first)) first = shown.get(id);
		return first !== null;
	}, 120000);
	outage.push(first - tKill);
	await waitUntil('the sentinel to name the new master', () => masterPort() !== master, 30000);
	const promoted = masterPort();
	console.log(`failover ${round}: master ${master} -> ${promoted}, first message sent after the kill shown ${first - tKill} ms after it`);
	// the killed node comes back; Sentinel makes it a replica of the new master
	sh(`redis-server --port ${master} --bind 127.0.0.1 --dir ${dir} --appendonly yes --appendfsync everysec ` +
		`--maxmemory-policy noeviction --save '' --pidfile ${dir}/redis.pid --logfile ${dir}/redis.log --daemonize yes`);
	await waitUntil('the sentinels to agree on a master with two replicas', settled, 60000);
	await sleep(2000);
}
sending = false;
await loop;
console.log(summary('Redis master SIGKILL -> first message shown', outage));

sender.close();
await admin.end();
client.socket.close();
await daemon.stop('SIGTERM');
// the restarted nodes are daemonized: stop them here (the harness stops the ones it started)
for (const port of sh(`ls -d ${env('H_DIR')}/redis-*`).split('\n').map((d) => d.split('-').pop()))
	try { sh(`kill $(cat ${nodeDir(port)}/redis.pid) 2>/dev/null`); } catch { /* already gone */ }
process.exit(0);
