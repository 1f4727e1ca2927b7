// tests/faults/soak_ha.mjs - the chaos soak on scripts/cluster.sh's topology (soak_ha.sh starts it).
//
// Both directions, several chats each, and per receiving service four clients through HAProxy: a
// Socket.IO client with the default transports (polling, then the upgrade), a websocket-only Socket.IO
// client and a /ws client (these reconnect from 100 ms to 1 s), and the client library
// clients/js/chat_client.mjs with its own delays, each resuming from the highest seq it saw. Senders call send_message, and
// edit or delete some of the messages they just sent (soak_lib.mjs's chatSender, the soaks' one
// traffic mix), half of the chats through HAProxy's Postgres port and half with the multi-host
// conninfo (target_session_attrs=read-write). An edit or delete is counted like a message. A seeded schedule injects one machine's loss at a time (--rounds N
// instead runs every fault, or those --faults names by key, once per round in this order):
//   redis-master   redis master SIGKILL   Sentinel promotes a replica; the old master starts again (a replica)
//   redis-replica  redis replica SIGKILL  one replica lost; the other meets WAIT 1; started again
//   sentinel       sentinel SIGKILL       one of three sentinels lost; started again
//   pg-switchover  pg switchover          patronictl switchover to the standby
//   pg-postgres    pg postgres SIGKILL    the primary's postmaster killed; Patroni restarts it or fails over
//   pg-patroni     pg Patroni SIGKILL     the leader's Patroni alone killed: its postgres runs on, HAProxy
//                                         marks it down (its REST check fails) and cuts its sessions; the
//                                         standby takes the leader key when it expires; the old Patroni
//                                         starts again and demotes its postgres
//   pg-machine     pg machine loss        the primary's Patroni and postgres SIGKILLed; the standby takes the
//                                         leader key when it expires; the old node starts again (a standby)
//   gateway        gateway SIGKILL        one gateway killed, HAProxy moves its clients; started again after a pause
//   haproxy        haproxy restart        HAProxy SIGKILLed and started again (cluster.sh restart haproxy)
// With CLUSTER_REDIS=cluster (soak.sh --topology ha-cluster) Redis is a Redis Cluster of 3 masters and their
// replicas (scripts/cluster.sh) and its faults are:
//   redis-master   redis master SIGKILL   a master holding a service queue's slot (CLUSTER KEYSLOT of the
//                                         queue's hash tag, CLUSTER NODES), chosen at random; its replica
//                                         takes over (cluster-node-timeout and election); the old master
//                                         starts again on its data and rejoins as a replica
//   redis-replica  redis replica SIGKILL  one replica lost (with one replica per master its master then has
//                                         none: the relays' WAIT 1 fails there until it is back); started again
// (scripts/cluster.sh's two replicas per master; CLUSTER_REDIS_REPLICAS=1 in the environment: one)
// After each fault it waits until the topology is whole again (Redis master with two linked replicas,
// every sentinel up, or every cluster node up with cluster_state:ok and each master a linked replica;
// Patroni leader and a streaming standby, every gateway healthy, HAProxy routing to each), so faults never overlap. Each fault's gap is printed per client kind and round, as a user
// feels it: the longest time a client was shown nothing, from the last message shown before the fault
// struck to the first after (or a longer pause before the topology was whole again); with where the
// sends' commits and the inbox writes paused (docs/faults.md, section 5). --max-gap fails the soak
// when a fault's gap is over its bound.
// A send that returned an error is counted as refused; a send that returned its id must be committed
// (in Postgres at the end) and shown. At the end, against what Postgres committed:
//   lost = 0 (acknowledged or committed, not shown), acknowledged but not committed = 0,
//   shown twice = 0, per-chat order violations = 0, unsent = 0.
//   node soak_ha.mjs [--seed N] [--seconds S] [--chats C] [--rounds N [--faults key,key...]]
//                    [--max-gap key=seconds,...]
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import pg from 'pg';
import { io } from 'socket.io-client';
import { resumingWs } from '../harness/ws_client.mjs';
import { ChatClient } from '../../clients/js/chat_client.mjs';
import { token } from '../harness/jwt.mjs';
import { DIRECTIONS, waitUntil, sleep, env } from './procs.mjs';
import { opt, optString, mulberry32, between as betweenIn, silenceSpan, gapTable, gapBounds, chatSender as sendLoop, Shown } from './soak_lib.mjs';

const seed = opt('seed', Math.floor(Math.random() * 2 ** 31));
const SECONDS = opt('seconds', 120);
const CHATS = opt('chats', 4);
const ROUNDS = opt('rounds', 0);

const D = env('CLUSTER_DIR');
const ports = (name) => env(name).split(',').map(Number);
const PG_PORTS = ports('CLUSTER_PG_PORTS');
const REST = ports('CLUSTER_PG_REST_PORTS');
const REDIS = ports('CLUSTER_REDIS_PORTS');
// sentinel or cluster (scripts/cluster.sh's CLUSTER_REDIS)
const REDIS_KIND = process.env.CLUSTER_REDIS ?? 'sentinel';
const CLUSTERED = REDIS_KIND === 'cluster';
const SENTINELS = CLUSTERED ? [] : ports('CLUSTER_SENTINEL_PORTS');
const TOPOLOGY = CLUSTERED ? 'ha-cluster' : 'ha';
// replicas per master (scripts/cluster.sh's CLUSTER_REDIS_REPLICAS), printed with the run
const TOPOLOGY_NOTE = CLUSTERED ? ` (${process.env.CLUSTER_REDIS_REPLICAS ?? 2} replica(s) per master)` : '';
const HAPROXY_PG = `postgresql://postgres@127.0.0.1:${env('CLUSTER_PG_PRIMARY_PORT')}/chat`;
const MULTI_HOST = env('CLUSTER_DATABASE_URL');
const GATEWAYS = { consumers: ports('CLUSTER_GATEWAYS_CONSUMERS'), workers: ports('CLUSTER_GATEWAYS_WORKERS') };
const FRONT = { consumers: Number(env('CLUSTER_FRONT_CONSUMERS')), workers: Number(env('CLUSTER_FRONT_WORKERS')) };

// the fault schedule has its own stream (soak_lib.mjs), so the same seed replays it
const rand = mulberry32(seed);
const paceRand = mulberry32(seed ^ 0x5bd1e995);
const between = (lo, hi, r = rand) => betweenIn(lo, hi, r);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(7)}s  ${s}`);
console.log(ROUNDS > 0
	? `== chaos soak, topology ${TOPOLOGY}: seed ${seed}, ${ROUNDS} rounds of each fault, ${CHATS} chats per direction${TOPOLOGY_NOTE} ==`
	: `== chaos soak, topology ${TOPOLOGY}: seed ${seed}, ${SECONDS} s, ${CHATS} chats per direction${TOPOLOGY_NOTE} ==`);
console.log(`   replay with: tests/faults/soak.sh --topology ${TOPOLOGY} --seed ${seed} ` +
	(ROUNDS > 0 ? `--rounds ${ROUNDS} --faults ${optString('faults', 'all')}` : `--seconds ${SECONDS}`));

// --- the cluster's processes, by the pid files scripts/cluster.sh keeps --------------------------

const pidOf = (name) => Number(fs.readFileSync(`${D}/pids/${name}.pid`, 'utf8').trim());
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

// restart(name): scripts/cluster.sh starts the part again as it started it first (and records its pid)
const CLUSTER = new URL('../../scripts/cluster.sh', import.meta.url).pathname;
// (asynchronous, so the clients go on reading meanwhile)
const run = promisify(execFile);
const restart = (name) => run(CLUSTER, ['restart', name], { timeout: 60000 });
// struck: when the current fault's first process was killed (its window's gaps are measured from it)
let struck = null;
const killWait = async (pid, signal = 'SIGKILL') => {
	struck ??= Date.now();
	try { process.kill(pid, signal); } catch { /* already gone */ }
	await waitUntil(`pid ${pid} to exit`, () => !alive(pid), 30000);
};

// asynchronous: a synchronous child process would stop this process's clients from reading meanwhile,
// and their messages would be counted as shown late (polling the topology runs throughout a failover)
const redisCli = async (port, ...args) => {
	try { return (await run('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 3000 })).stdout; } catch { return ''; }
};
const redisMasterPort = async () => Number((await redisCli(SENTINELS[0], 'SENTINEL', 'get-master-addr-by-name', 'chat')).split('\n')[1]);
// cluster.sh's names by port
const redisName = (port) => (CLUSTERED ? `redis-${port}` : ['redis-master', 'redis-replica', 'redis-replica-2'][REDIS.indexOf(port)]);

// --- the Redis Cluster's view (CLUSTER_REDIS=cluster) ---------------------------------------------
// clusterNodes(): CLUSTER NODES of the first node that answers, as { id, port, flags, master, slots }
const clusterNodes = async () => {
	for (const p of REDIS) {
		const out = await redisCli(p, 'CLUSTER', 'NODES');
		if (!out) continue;
		return out.trim().split('\n').map((l) => l.split(' ')).map((f) => ({
			id: f[0], port: Number(f[1].split(/[:@]/)[1]), flags: f[2].split(','), master: f[3], slots: f.slice(8),
		}));
	}
	return [];
};
const slotOf = async (key) => Number((await redisCli(REDIS[0], 'CLUSTER', 'KEYSLOT', key)).trim() || (await redisCli(REDIS[1], 'CLUSTER', 'KEYSLOT', key)).trim());
// the slots of the services' queues (one partition each: the queue's keys carry the tag {<queue>},
// common/redis_cluster.hpp ClusterQueueName)
const queueSlots = () => Promise.all(Object.values(DIRECTIONS).map((d) => slotOf(`{${d.queue}}`)));
const inRanges = (slot, ranges) => ranges.some((r) => {
	if (r.startsWith('[')) return false; // a slot being migrated
	const [lo, hi = lo] = r.split('-').map(Number);
	return slot >= lo && slot <= hi;
});
// slotMaster(slot): the port of the master that serves a slot now (CLUSTER NODES of a live node), or 0
const slotMaster = async (slot) => {
	const n = (await clusterNodes()).find((m) => m.flags.includes('master') && !m.flags.includes('fail') && inRanges(slot, m.slots));
	return n?.port ?? 0;
};

const rest = async (i, path) => {
	try {
		const r = await fetch(`http://127.0.0.1:${REST[i]}${path}`, { signal: AbortSignal.timeout(2000) });
		return { status: r.status, body: await r.json().catch(() => ({})) };
	} catch { return { status: 0, body: {} }; }
};
const pgLeader = async () => {
	for (const i of [0, 1]) if ((await rest(i, '/primary')).status === 200) return i;
	return -1;
};
const haproxyUp = async () => {
	try { await run(CLUSTER, ['haproxy-up'], { timeout: 5000 }); return true; } catch { return false; }
};
const gatewayUp = async (port) => {
	try { return (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) })).ok; } catch { return false; }
};

// clusterWhole(): every node answers and says cluster_state:ok, every master with slots has a replica
// whose link is up (redis_min_replicas = 1 needs one on each)
async function clusterWhole() {
	for (const p of REDIS) if (!/cluster_state:ok/.test(await redisCli(p, 'CLUSTER', 'INFO'))) return false;
	const nodes = await clusterNodes();
	const masters = nodes.filter((n) => n.flags.includes('master') && n.slots.length && !n.flags.includes('fail'));
	if (masters.length !== 3) return false;
	for (const m of masters) {
		const replicas = nodes.filter((n) => n.master === m.id && !n.flags.includes('fail'));
		const links = await Promise.all(replicas.map((r) => redisCli(r.port, 'INFO', 'replication')));
		if (!links.some((info) => /master_link_status:up/.test(info))) return false;
	}
	return true;
}

// whole(): one Redis master (as every sentinel sees it) with two replicas whose links are up (or the
// cluster whole), a Patroni leader and a synchronous standby, every gateway healthy, and HAProxy routing to each.
async function whole() {
	if (CLUSTERED) return (await clusterWhole()) && pgAndGatewaysWhole();
	const m = await redisMasterPort();
	if (!m) return false;
	for (const p of SENTINELS) if (Number((await redisCli(p, 'SENTINEL', 'get-master-addr-by-name', 'chat')).split('\n')[1]) !== m) return false;
	for (const other of REDIS.filter((p) => p !== m)) {
		const info = await redisCli(other, 'INFO', 'replication');
		if (!/master_link_status:up/.test(info) || !info.includes(`master_port:${m}`)) return false;
	}
	return pgAndGatewaysWhole();
}

async function pgAndGatewaysWhole() {
	// Patroni's view: a running leader and a streaming synchronous standby (with synchronous_mode only
	// that one may take over; a standby that is not in sync yet would leave no candidate)
	const members = (await rest(0, '/cluster')).body.members ?? (await rest(1, '/cluster')).body.members ?? [];
	if (!members.some((m) => m.role === 'leader' && m.state === 'running')) return false;
	if (!members.some((m) => m.role === 'sync_standby' && ['streaming', 'running'].includes(m.state))) return false;
	for (const p of [...GATEWAYS.consumers, ...GATEWAYS.workers]) if (!(await gatewayUp(p))) return false;
	return haproxyUp();
}

// --- clients and senders ----------------------------------------------------------------------------

const sides = Object.entries(DIRECTIONS).map(([name, d], i) => ({
	name, ...d, chats: Array.from({ length: CHATS }, (_, c) => 1000 * (i + 1) + c), front: FRONT[d.receiver],
}));

// what a client was shown: Shown (soak_lib.mjs), messages and their edits and deletes alike
const newClient = (side, kind) => ({ name: `${side.receiver} ${kind}`, kind, shown: new Shown() });

function socketIoClient(side, kind, transports) {
	const c = newClient(side, kind);
	const t = token(side.chats, { sub: c.name, ttlSeconds: 6 * 3600 });
	c.socket = io(`http://127.0.0.1:${side.front}`, {
		auth: (cb) => cb({ token: t, since: c.shown.lastSeq }), reconnectionDelay: 100, reconnectionDelayMax: 1000, ...(transports ? { transports } : {}),
	});
	c.shown.listen(c.socket);
	c.connected = () => c.socket.connected;
	c.close = () => c.socket.close();
	return c;
}

// the JavaScript client library (clients/js/chat_client.mjs) with its own reconnect delays (not the
// test clients' 100 ms to 1 s): what an application built on it shows its user
function libraryClient(side) {
	const c = newClient(side, 'chat_client.mjs');
	const lib = new ChatClient({ url: `http://127.0.0.1:${side.front}`, token: token(side.chats, { sub: c.name, ttlSeconds: 6 * 3600 }), io });
	lib.on('message', (m) => c.shown.message(m)).on('edited', (e) => c.shown.change(e)).on('deleted', (e) => c.shown.change(e));
	lib.connect();
	c.connected = () => lib.socket.connected;
	c.close = () => lib.close();
	return c;
}

// /ws: reconnects with ?since= the highest seq seen, backing off from 100 ms to 1 s.
function wsClient(side) {
	const c = newClient(side, '/ws');
	const t = token(side.chats, { sub: c.name, ttlSeconds: 6 * 3600 });
	const ws = resumingWs(() => `ws://127.0.0.1:${side.front}/ws?token=${t}&since=${c.shown.lastSeq}`,
		(f) => c.shown.frame(f), { minDelay: 100, maxDelay: 1000 });
	c.connected = ws.connected;
	c.close = ws.close;
	return c;
}

// connect(url): node-pg takes one host, so a multi-host URL (host1:port1,host2:port2) is tried host by
// host and the first that accepts writes is kept, as libpq does with target_session_attrs=read-write.
async function connect(url) {
	const m = /^(postgresql:\/\/[^@]*@)([^/]+)(\/[^?]*)/.exec(url);
	const hosts = m[2].split(',');
	let last;
	for (const h of hosts) {
		const db = new pg.Client({ connectionString: `${m[1]}${h}${m[3]}`, connectionTimeoutMillis: 5000 });
		db.on('error', () => {});
		try {
			await db.connect();
			if (hosts.length === 1) return db;
			const { rows } = await db.query('SHOW transaction_read_only');
			if (rows[0].transaction_read_only === 'off') return db;
			last = new Error(`${h} is read-only`);
		} catch (e) { last = e; }
		await db.end().catch(() => {});
	}
	throw last;
}

const acked = []; // { side, id } of every send that returned its id
const sent = { ok: 0, failed: 0, sending: true };
// soak_lib.mjs's traffic mix (sends, edits, deletes), through HAProxy or the multi-host conninfo
const chatSender = (side, chat, url) => sendLoop(side.sender, chat, sent, paceRand,
	{ changes: true, connect: () => connect(url), onSent: (id) => acked.push({ side: side.name, id }) });

// --- faults ---------------------------------------------------------------------------------------

const faults = {};
const count = (kind) => (faults[kind] = (faults[kind] ?? 0) + 1);
const FAULTS = {
	async 'redis master SIGKILL'() {
		if (CLUSTERED) return clusterMasterKill();
		const m = await redisMasterPort();
		const name = redisName(m);
		const pid = pidOf(name);
		say(`fault: SIGKILL Redis master :${m} (${name})`);
		await killWait(pid);
		await waitUntil('Sentinel to promote the replica', async () => { const p = await redisMasterPort(); return p && p !== m; }, 60000);
		say(`  Sentinel promoted :${await redisMasterPort()}; the old master starts again`);
		await sleep(between(0, 3000));
		await restart(name);
	},
	async 'redis replica SIGKILL'() {
		const m = CLUSTERED ? 0 : await redisMasterPort();
		const port = pick(CLUSTERED ? (await clusterNodes()).filter((n) => n.flags.includes('slave')).map((n) => n.port) : REDIS.filter((p) => p !== m));
		const name = redisName(port);
		say(`fault: SIGKILL Redis replica :${port} (${name})`);
		await killWait(pidOf(name));
		await sleep(between(500, 3000));
		await restart(name);
	},
	async 'sentinel SIGKILL'() {
		const name = `sentinel-${between(0, 2)}`;
		say(`fault: SIGKILL ${name}`);
		await killWait(pidOf(name));
		await sleep(between(500, 3000));
		await restart(name);
	},
	async 'pg switchover'() {
		const leader = await pgLeader();
		if (leader < 0) return say('fault: pg switchover skipped (no leader)');
		say(`fault: patronictl switchover pg${leader + 1} -> pg${2 - leader}`);
		const args = ['-c', `${D}/pg1.yml`, 'switchover', '--leader', `pg${leader + 1}`, '--candidate', `pg${2 - leader}`, '--force'];
		// as the postgres user when root, like cluster.sh's as_pg
		if (process.getuid() === 0) await run('runuser', ['-u', 'postgres', '--', 'patronictl', ...args], { timeout: 60000 });
		else await run('patronictl', args, { timeout: 60000 });
	},
	async 'pg postgres SIGKILL'() {
		const leader = await pgLeader();
		if (leader < 0) return say('fault: pg postgres SIGKILL skipped (no leader)');
		const pid = Number(fs.readFileSync(`${D}/pg${leader + 1}/postmaster.pid`, 'utf8').split('\n')[0]);
		say(`fault: SIGKILL the primary's postmaster (pg${leader + 1}, pid ${pid})`);
		await killWait(pid);
	},
	async 'pg Patroni SIGKILL'() {
		const leader = await pgLeader();
		if (leader < 0) return say('fault: pg Patroni SIGKILL skipped (no leader)');
		const name = `patroni-${leader + 1}`;
		say(`fault: SIGKILL pg${leader + 1}'s Patroni alone (its postgres runs on, unfenced)`);
		await killWait(pidOf(name));
		await waitUntil('the standby to take the leader key', async () => (await pgLeader()) === 1 - leader, 90000);
		say(`  pg${2 - leader} is the leader; pg${leader + 1}'s Patroni starts again and demotes its postgres`);
		await restart(name);
	},
	async 'pg machine loss'() {
		const leader = await pgLeader();
		if (leader < 0) return say('fault: pg machine loss skipped (no leader)');
		const name = `patroni-${leader + 1}`;
		const patroni = pidOf(name);
		const postmaster = Number(fs.readFileSync(`${D}/pg${leader + 1}/postmaster.pid`, 'utf8').split('\n')[0]);
		say(`fault: SIGKILL pg${leader + 1}'s Patroni and postgres (the machine is lost)`);
		await killWait(patroni);
		await killWait(postmaster);
		await waitUntil('the standby to take the leader key', async () => (await pgLeader()) === 1 - leader, 90000);
		say(`  pg${2 - leader} is the leader; pg${leader + 1} starts again`);
		await restart(name);
	},
	async 'gateway SIGKILL'() {
		const svc = pick(['consumers', 'workers']);
		const n = between(1, 2);
		const name = `gateway-${svc}-${n}`;
		const pid = pidOf(name);
		const away = between(500, 5000);
		say(`fault: SIGKILL ${name}, down for ${away} ms`);
		await killWait(pid);
		await sleep(away);
		await restart(name);
	},
	async 'haproxy restart'() {
		say('fault: SIGKILL HAProxy, started again at once');
		await killWait(pidOf('haproxy'));
		await restart('haproxy');
	},
};
// a Redis Cluster master that holds a service queue's slot, SIGKILLed; its replica is promoted by the
// cluster itself (no Sentinel); the old master starts again on its data and rejoins as a replica
async function clusterMasterKill() {
	const slots = await queueSlots();
	const masters = await Promise.all(slots.map(slotMaster));
	const m = pick([...new Set(masters.filter(Boolean))]);
	const mine = slots.filter((s, i) => masters[i] === m);
	say(`fault: SIGKILL Redis Cluster master :${m} (serves slot ${mine.join(', ')} of the queues {${Object.values(DIRECTIONS).map((d) => d.queue).join('}, {')}})`);
	await killWait(pidOf(redisName(m)));
	await waitUntil('the cluster to promote a replica', async () => (await Promise.all(mine.map(slotMaster))).every((p) => p && p !== m), 60000, 100);
	say(`  the cluster promoted :${await slotMaster(mine[0])} (${((Date.now() - struck) / 1000).toFixed(2)} s after the kill); the old master starts again`);
	await sleep(between(0, 3000));
	await restart(redisName(m));
}

// --faults takes these keys (a Redis Cluster has no sentinels)
const KEYS = {
	'redis-master': 'redis master SIGKILL', 'redis-replica': 'redis replica SIGKILL', sentinel: 'sentinel SIGKILL',
	'pg-switchover': 'pg switchover', 'pg-postgres': 'pg postgres SIGKILL', 'pg-patroni': 'pg Patroni SIGKILL',
	'pg-machine': 'pg machine loss', gateway: 'gateway SIGKILL', haproxy: 'haproxy restart',
};
if (CLUSTERED) delete KEYS.sentinel;
// --max-gap key=seconds,...: a fault whose gap (any client, any round) is over its bound fails the soak
const maxGap = gapBounds(optString('max-gap', ''));
for (const k of maxGap.keys()) if (!KEYS[k]) throw new Error(`--max-gap: no fault ${k} (${Object.keys(KEYS).join(', ')})`);
const chosen = optString('faults', 'all').replace(/^all$/, Object.keys(KEYS).join(',')).split(',').map((k) => {
	if (!KEYS[k]) throw new Error(`--faults: no fault ${k} (${Object.keys(KEYS).join(', ')})`);
	return KEYS[k];
});

// --- the run --------------------------------------------------------------------------------------

for (const side of sides) {
	side.clients = [socketIoClient(side, 'socket.io'), socketIoClient(side, 'socket.io websocket-only', ['websocket']), wsClient(side),
		libraryClient(side)];
}
await waitUntil('clients to connect', () => sides.every((s) => s.clients.every((c) => c.connected())), 30000);
const senders = sides.flatMap((side) => side.chats.map((chat, i) => chatSender(side, chat, i % 2 ? MULTI_HOST : HAPROXY_PG)));

// each fault's window: from its injection until the topology is whole again (gaps are read from it at the end)
const windows = [];
async function inject(kind) {
	count(kind);
	const w = { kind, from: Date.now(), to: null };
	windows.push(w);
	struck = null;
	try {
		await FAULTS[kind]();
	} catch (e) {
		say(`fault ${kind} could not be injected cleanly: ${e.message}`);
	}
	w.from = struck ?? w.from; // a switchover kills nothing: its window starts when it was asked for
	await waitUntil('the topology to be whole again', whole, 180000, 250).catch((e) => say(e.message));
	w.to = Date.now();
	say(`  whole again after ${((w.to - w.from) / 1000).toFixed(1)} s`);
}
if (ROUNDS > 0) {
	await waitUntil('the topology to be whole', whole, 60000, 250);
	for (let r = 1; r <= ROUNDS; r++) {
		for (const kind of chosen) {
			await sleep(between(1000, 2000)); // messages flow before each fault: its gap starts from one
			await inject(kind);
		}
	}
} else {
	const deadline = t0 + SECONDS * 1000;
	while (Date.now() < deadline - 5000) {
		await sleep(between(1000, 4000));
		await inject(pick(chosen));
	}
}
await sleep(2000); // the last window needs a message shown after it
sent.sending = false;
await Promise.all(senders);
say(`sending stopped: ${sent.ok} sends and ${sent.changes ?? 0} edits or deletes acknowledged, ${sent.failed} refused (the sender saw an error)`);

// Truth: what the primary committed, per side; then wait until every client was shown all of it.
const truthDb = await connect(MULTI_HOST);
const q = async (sql, params) => (await truthDb.query(sql, params)).rows;
const truth = {};
for (const side of sides) {
	truth[side.name] = await q(`SELECT id::text, version FROM ${side.sender}.messages WHERE chat_id = ANY($1::bigint[])`, [side.chats]);
}
// a message not shown, and each of its changes not shown, count one each
const missing = (side, c) => c.shown.missing(truth[side.name]);
await waitUntil('every client to be shown every committed message', () =>
	sides.every((side) => side.clients.every((c) => missing(side, c) === 0)), 120000).catch((e) => say(e.message));
await sleep(1000);
// each stage's timestamps, for where a fault's pause lay (Postgres and this process share the clock):
// the sends committed (messages.created_at) and written to the receiver's inbox (inbox.received_at;
// both are their transaction's start). The relay's own moment is in no table: the logs have it.
const epochMs = async (sql, params) => (await q(`SELECT (extract(epoch FROM t) * 1000)::float8 AS ms FROM (${sql}) s(t) ORDER BY 1`, params)).map((r) => r.ms);
for (const side of sides) {
	side.stages = {
		committed: await epochMs(`SELECT created_at FROM ${side.sender}.messages WHERE chat_id = ANY($1::bigint[])`, [side.chats]),
		inbox: await epochMs(`SELECT received_at FROM ${side.receiver}.inbox`),
	};
}

console.log('');
console.log(`faults injected: ${Object.entries(faults).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
// gaps, as a user feels them: per fault, per client, the longest time it was shown nothing, from the
// last message shown before the fault struck (its first kill) to the first shown after, or a longer
// pause before the topology was whole again (never: not shown a message after it). Each round prints
// every client's silence, relative to the kill; the table gives each client kind's worst client.
const clients = sides.flatMap((side) => side.clients);
const rows = [];
const fmt = (ms) => (ms === Infinity ? 'never' : `${(ms / 1000).toFixed(1)}`);
const rel = (t, at) => `${t >= at ? '+' : ''}${((t - at) / 1000).toFixed(2)}`;
console.log('gaps per round (the longest silence of each client; from the last message shown before it, relative to the fault):');
windows.forEach((w, n) => {
	const parts = [];
	const worst = new Map(); // kind -> worst ms of this round
	for (const c of clients) {
		const span = silenceSpan(c.shown.arrivals, w.from, w.to ?? Date.now());
		const ms = span?.ms ?? Infinity;
		worst.set(c.kind, Math.max(worst.get(c.kind) ?? -1, ms));
		parts.push(`${c.name} ${fmt(ms)}` + (span ? ` (${rel(span.start, w.from)}..${rel(span.end, w.from)})` : ''));
	}
	for (const [kind, ms] of worst) rows.push({ fault: w.kind, kind, ms });
	console.log(`  #${n + 1} ${w.kind} at ${new Date(w.from).toISOString().slice(11, 23)} UTC: ${parts.join(', ')}`);
	// where the pause lay on the way: each stage's longest pause in the window, relative to the fault
	for (const side of sides) {
		const stage = (name, times) => {
			const span = silenceSpan(times, w.from, w.to ?? Date.now());
			return `${name} ${span ? `${rel(span.start, w.from)}..${rel(span.end, w.from)}` : 'never'}`;
		};
		console.log(`     ${side.name} pauses: ${Object.entries(side.stages).map(([k, t]) => stage(k, t)).join(', ')}`);
	}
});
let failed = false;
for (const [fault, byKind] of gapTable(rows)) {
	const all = [...byKind.values()];
	const max = Math.max(...all.map((g) => g.max));
	const key = Object.keys(KEYS).find((k) => KEYS[k] === fault);
	const over = maxGap.has(key) && max > maxGap.get(key);
	console.log(`gap ${fault}: max ${fmt(max)} s over ${all[0].rounds.length} rounds; per client kind (each round's worst client): ` +
		[...byKind].map(([kind, g]) => `${kind} ${g.rounds.map(fmt).join(', ')} s`).join('; ') +
		(over ? `   OVER the bound of ${fmt(maxGap.get(key))} s (--max-gap)` : ''));
	if (over) failed = true;
}
console.log(`sends: ${sent.ok} acknowledged (+ ${sent.changes ?? 0} edits and deletes), ${sent.failed} refused`);
for (const side of sides) {
	const rows = truth[side.name];
	const committed = new Set(rows.map((m) => m.id));
	const ackedHere = acked.filter((a) => a.side === side.name);
	const ackedNotCommitted = ackedHere.filter((a) => !committed.has(a.id));
	const [{ unsent }] = await q(`SELECT count(*)::int AS unsent FROM ${side.sender}.outbox WHERE sent_at IS NULL`);
	const lost = Math.max(...side.clients.map((c) => missing(side, c))) + ackedNotCommitted.length;
	const twice = side.clients.reduce((n, c) => n + c.shown.twice(), 0);
	const violations = side.clients.reduce((n, c) => n + c.shown.chatOrder, 0);
	const changed = rows.reduce((n, m) => n + m.version, 0);
	console.log(`${side.name}: committed ${rows.length} + ${changed} edits and deletes (acknowledged ${ackedHere.length} sends)   lost ${lost}   shown twice ${twice}   ` +
		`order violations ${violations}   unsent ${unsent}`);
	if (ackedNotCommitted.length) console.log(`  acknowledged but not in Postgres: ${ackedNotCommitted.slice(0, 10).map((a) => a.id).join(' ')}`);
	for (const c of side.clients) {
		const gone = rows.filter((m) => !c.shown.seen.has(m.id));
		console.log(`  ${c.name}: shown ${c.shown.seen.size}, missing ${missing(side, c)} (messages ${gone.length}), twice ${c.shown.twice()}, ` +
			`order violations ${c.shown.chatOrder}` +
			(gone.length ? `; never shown: ${gone.slice(0, 5).map((m) => m.id).join(' ')}` : ''));
	}
	if (lost || twice || violations || unsent) failed = true;
}
await truthDb.end();
for (const side of sides) side.clients.forEach((c) => c.close());
console.log(failed ? `FAIL (seed ${seed})` : 'PASS');
process.exit(failed ? 1 : 0);
