// tests/harness/redis_cluster.mjs - what the Node peers of the cluster suites (tests/cluster/) ask a Redis
// Cluster started by tests/harness/redis_cluster.sh, each question to one node at a time (a node may be
// down: the next one answers).
//   await masterOf(ports, slot)   {port, first, last, id}: the master serving slot now, its range and id
//   await replicaUp(port)         true when that node is a replica whose link to its master is up
//   planReshard(ports, slots)     of these slots, the one nearest its master's first slot: {slot, from, to,
//                                 count}, moving `count` slots (from.first .. slot) to another master `to`
//   await reshard(plan)           redis-cli --cluster reshard (HARNESS_REDIS_CLI) doing it; its exit code
//   clusterClient(ports, options)  an ioredis Cluster on these seed ports, over TLS on a TLS cluster
//   await restartNode(port, pid)  the node SIGKILLed as pid started again on its data ($CLUSTER_NODE_START_<port>),
//                                 once pid has exited; returns the child process
//   checkGap(what, ms)            prints a failover's gap or a reshard's pause; checks it against
//                                 CLUSTER_GAP_BOUND_MS only when that is set (a run on a machine whose speed
//                                 is known): a suite's verdict never depends on the machine's speed, it waits
//                                 for the state the fault caused and counts every message
// On a cluster whose nodes speak only TLS (cluster_start with CLUSTER_TLS exports CLUSTER_CACERT) every
// connection here, the peers' ioredis ones and redis-cli's, speaks TLS, each node verified against that CA
// by its announced address (127.0.0.1, an IP SAN of its certificate).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import IORedis from 'ioredis';
import { check, env, waitUntil } from './check.mjs';

const CACERT = process.env.CLUSTER_CACERT || '';
const tls = CACERT ? { tls: { ca: readFileSync(CACERT) } } : {};
const cliTls = CACERT ? ['--tls', '--cacert', CACERT] : [];

export function clusterClient(ports, options = {}) {
	return new IORedis.Cluster(ports.map((port) => ({ host: '127.0.0.1', port })),
		{ ...options, redisOptions: { ...options.redisOptions, ...tls } });
}

// exited: the process is gone or a zombie, so its listening ports are free. A SIGKILLed redis-server in
// uninterruptible sleep (its fsync on a loaded disk) holds them until it leaves it: a restart before then
// fails "Address already in use" on the cluster bus port (seen once in the long command, 4 s after the kill).
function exited(pid) {
	try {
		return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] === 'Z';
	} catch {
		return true;
	}
}

export async function restartNode(port, pid) {
	await waitUntil(`node ${port} (pid ${pid}) exited after its SIGKILL`, () => exited(pid), 60000);
	return spawn('bash', ['-c', `exec ${env(`CLUSTER_NODE_START_${port}`)}`], { stdio: 'ignore' });
}

const node = (port) => {
	const r = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, ...tls });
	r.on('error', () => {});
	return r;
};

export async function masterOf(ports, slot) {
	for (const port of ports) {
		const r = node(port);
		try {
			await r.connect();
			for (const [first, last, [, mport, id]] of await r.cluster('SLOTS'))
				if (slot >= first && slot <= last) return { port: mport, first, last, id };
		} catch { /* a node that is down: the next */ } finally { r.disconnect(); }
	}
	throw new Error(`no node names slot ${slot}`);
}

export async function replicaUp(port) {
	const r = node(port);
	try { await r.connect(); return /master_link_status:up/.test(await r.info('replication')); } catch { return false; } finally { r.disconnect(); }
}

export async function planReshard(ports, slots) {
	let best = null;
	for (const slot of slots) {
		const m = await masterOf(ports, slot);
		if (!best || slot - m.first < best.slot - best.from.first) best = { slot, from: m };
	}
	let to = null;
	for (const slot of slots) {
		const m = await masterOf(ports, slot);
		if (m.id !== best.from.id) { to = m; break; }
	}
	return { ...best, to, count: best.slot - best.from.first + 1 };
}

export function reshard({ from, to, count }) {
	return new Promise((resolve) => {
		const c = spawn(process.env.HARNESS_REDIS_CLI || 'redis-cli', [...cliTls, '--cluster', 'reshard', `127.0.0.1:${to.port}`, '--cluster-from', from.id,
			'--cluster-to', to.id, '--cluster-slots', String(count), '--cluster-yes'], { stdio: ['ignore', 'ignore', 'inherit'] });
		c.on('exit', resolve);
	});
}

const GAP_BOUND_MS = Number(process.env.CLUSTER_GAP_BOUND_MS || 0);

export function checkGap(what, ms) {
	if (GAP_BOUND_MS) check(`${what} ${ms} ms <= ${GAP_BOUND_MS} ms (CLUSTER_GAP_BOUND_MS)`, ms <= GAP_BOUND_MS);
	else console.log(`gap  ${what}: ${ms} ms`);
}
