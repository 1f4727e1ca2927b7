// tests/cluster/relay.mjs - a relay's jobs on a Redis Cluster, through a failover and a reshard: the
// scenario of cluster.relay (chat-outbox-relay, relay.sh) and cluster.extension (the extension's relay
// worker, extension.sh).
//
// Real processes: 12 senders (one per chat, each waiting for its commit before the next send) calling
// consumers.send_message; the relay under test relaying through redis-cluster:// (started by the .sh);
// six bullmq Workers, one per partition queue "{chat-messages-p<p>}", each on its own ioredis Cluster
// connection, recording what they process.
//   1. every master holds partitions (6 partitions' slots over 3 masters), traffic flows;
//   2. the master of partition 0's slot is SIGKILLed: its replica is promoted by the cluster itself;
//      the gap (kill to the first job of that master's partitions processed after it) is bounded;
//      it starts again and rejoins as the new master's replica;
//   3. a reshard under traffic moves partition <r>'s slot to another master (redis-cli --cluster reshard);
//   4. the senders stop; every message must be processed once, each chat in send order, and every
//      outbox row marked sent.
// Env: PGURL, CLUSTER_PORTS, H_DIR (relay.sh, extension.sh, tls_extension.sh); CLUSTER_CACERT for a TLS
// cluster (tests/harness/redis_cluster.mjs).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Worker } from 'bullmq';
import pg from 'pg';
import { check, env, finish, sleep, waitFor, waitUntil } from '../harness/check.mjs';
import { checkGap, clusterClient, masterOf as clusterMasterOf, planReshard, replicaUp, reshard, restartNode } from '../harness/redis_cluster.mjs';

const PARTITIONS = 6, CHATS = 12, PAUSE_MS = 40;
const t0 = Date.now();
const say = (s) => console.log(`${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${s}`);
const ports = env('CLUSTER_PORTS').split(' ').map(Number);
const cluster = () => clusterClient(ports, { redisOptions: { maxRetriesPerRequest: null }, clusterRetryStrategy: () => 100 });
const queueOf = (p) => `{chat-messages-p${p}}`;

const processed = []; // {id, chat, n, partition, at, added: when the relay added the job (job.timestamp)}
const workers = [];
let workerErrors = 0;
for (let p = 0; p < PARTITIONS; p++) {
	workers.push(new Worker(queueOf(p), async (job) => {
		const m = /^c(\d+)-n(\d+)$/.exec(job.data.body);
		processed.push({ id: job.id, chat: Number(m[1]), n: Number(m[2]), partition: p, at: Date.now(), added: job.timestamp });
	}, { connection: cluster(), concurrency: 1 }));
	// a Worker reports the failover's refused connections and redirections (ioredis retries them)
	workers[p].on('error', () => { workerErrors++; });
}
await Promise.all(workers.map((w) => w.waitUntilReady()));

const admin = cluster();
const slotOf = async (p) => Number(await admin.cluster('KEYSLOT', `bull:${queueOf(p)}:wait`));
// slot -> {port, first, last, id} of the master serving it
const masterOf = (slot) => clusterMasterOf(ports, slot);

const slots = [];
for (let p = 0; p < PARTITIONS; p++) slots.push(await slotOf(p));
const owners = [];
for (const s of slots) owners.push((await masterOf(s)).port);
check(`every master holds partitions (partition -> master: ${owners.join(' ')})`, new Set(owners).size === 3);

// the senders: one per chat, in order, until told to stop
const pool = new pg.Pool({ connectionString: env('PGURL'), max: CHATS });
const sent = new Map(); // chat -> count committed
let sending = true;
const senders = Array.from({ length: CHATS }, async (_, i) => {
	const chat = i + 1;
	sent.set(chat, 0);
	for (let n = 1; sending; n++) {
		for (;;) {
			try { await pool.query('SELECT consumers.send_message($1, $2)', [chat, `c${chat}-n${n}`]); break; } catch { await sleep(100); }
		}
		sent.set(chat, n);
		await sleep(PAUSE_MS);
	}
});
const total = () => [...sent.values()].reduce((a, b) => a + b, 0);

await waitUntil('traffic through every partition', async () => new Set(processed.map((m) => m.partition)).size === PARTITIONS, 30000);
say(`flowing: ${processed.length} processed`);

// 2. a master SIGKILLed mid-stream
const victim = await masterOf(slots[0]);
const hit = new Set(owners.map((o, p) => (o === victim.port ? p : -1)).filter((p) => p >= 0));
const pid = execFileSync('cat', [`${env('H_DIR')}/node-${victim.port}/redis.pid`], { encoding: 'utf8' }).trim();
const killedAt = Date.now();
process.kill(Number(pid), 'SIGKILL');
say(`SIGKILLed master ${victim.port} (partitions ${[...hit].join(',')})`);
// the first job of those partitions that the relay added after the kill: it can only be on the promoted
// replica (one processed late on a loaded machine but added before the kill would say nothing of the failover)
const after = (m) => hit.has(m.partition) && m.added > killedAt;
await waitUntil('a job of the killed master\'s partitions added and processed after the kill',
	async () => processed.some(after), 60000);
const back = processed.find(after).at;
const promoted = await masterOf(slots[0]);
say(`failover: ${promoted.port} serves slot ${slots[0]}; first job of those partitions ${back - killedAt} ms after the kill`);
checkGap(`gap after the master's SIGKILL`, back - killedAt);
// the relay's part of the gap: from the replica's election (its log's line, Redis' "#" or Valkey's "*",
// in local time as Date.parse reads it) to the first job the relay added on it; the rest is the cluster's (the failure detection, the
// election's delay) and the Workers'
const won = /^\d+:\w (\d+ \w+ \d+ [\d:.]+) [#*] Failover election won/m
	.exec(readFileSync(`${env('H_DIR')}/node-${promoted.port}/redis.log`, 'utf8'));
const electedAt = won ? Date.parse(won[1]) : NaN;
const firstAdded = Math.min(...processed.filter(after).map((m) => m.added));
say(`${promoted.port} won its election ${electedAt - killedAt} ms after the kill; the relay's first job on it ${firstAdded - electedAt} ms after that`);
// the killed node starts again on its data and rejoins as the new master's replica: until then that
// master has none, and the relay's WAIT for one replica (--redis-min-replicas 1, chat_outbox.redis_min_replicas = 1)
// rolls its passes back
const restarted = await restartNode(victim.port, Number(pid));
await waitUntil(`${victim.port} a replica again`, () => replicaUp(victim.port), 30000);
say(`${victim.port} started again: a replica of ${promoted.port}`);

// 3. a reshard under traffic: the partition whose slot is nearest its master's first slot moves
const plan = await planReshard(ports, slots);
const r = slots.indexOf(plan.slot), to = plan.to;
say(`reshard: ${plan.count} slot(s) from ${plan.from.port} to ${to.port}, partition ${r}'s slot ${slots[r]} among them`);
writeFileSync(`${env('H_DIR')}/reshard-target`, String(to.port)); // relay.sh looks for the relay's MOVED to it
const reshardAt = Date.now();
const code = await reshard(plan);
check(`redis-cli --cluster reshard exited ${code}`, code === 0);
const moved = await masterOf(slots[r]);
say(`reshard took ${Date.now() - reshardAt} ms; slot ${slots[r]} is on ${moved.port} now`);
check(`partition ${r}'s slot moved to another master`, moved.id === to.id);
const reshardEnd = Date.now();
await waitUntil(`jobs of partition ${r} processed after the reshard`, async () => processed.some((m) => m.partition === r && m.at > reshardEnd), 30000);
await sleep(1000);
// the longest pause between two jobs of the moved partition from the reshard's start to a second after it
const times = processed.filter((m) => m.partition === r && m.at >= reshardAt - 1000).map((m) => m.at);
let reshardGap = 0;
for (let i = 1; i < times.length && times[i - 1] <= reshardEnd + 1000; i++) reshardGap = Math.max(reshardGap, times[i] - times[i - 1]);
checkGap(`longest pause between partition ${r}'s jobs around the reshard`, reshardGap);

// 4. stop, drain, count
sending = false;
await Promise.all(senders);
const want = total();
say(`${want} sent; draining`);
await waitUntil(`all ${want} processed`, async () => new Set(processed.map((m) => m.id)).size >= want, 60000).catch(() => {});
const ids = new Map();
for (const m of processed) ids.set(m.id, (ids.get(m.id) || 0) + 1);
const twice = [...ids.values()].filter((c) => c > 1).length;
let lost = 0, disorder = 0;
for (const [chat, count] of sent) {
	const ns = processed.filter((m) => m.chat === chat).map((m) => m.n);
	const seen = new Set(ns);
	for (let n = 1; n <= count; n++) if (!seen.has(n)) lost++;
	for (let i = 1; i < ns.length; i++) if (ns[i] < ns[i - 1]) disorder++;
}
check(`${want} sent, ${ids.size} processed: 0 lost (${lost})`, lost === 0);
check(`0 processed twice (${twice})`, twice === 0);
check(`0 out of order within a chat (${disorder})`, disorder === 0);
// the last window's marks commit after its WAIT, and a tick ends at the relay's next pass
let unsent = -1;
await waitFor('every outbox row marked sent', async () => {
	const { rows } = await pool.query('SELECT count(*)::int AS n FROM consumers.outbox WHERE sent_at IS NULL');
	unsent = rows[0].n;
	return unsent === 0;
}, 20000);
const cursors = unsent === 0 ? [] : (await pool.query(`SELECT partition, partitions, win_last, done_at FROM chat_outbox.outbox_cursors
	WHERE service = 'consumers' ORDER BY partition`)).rows;
const byPartition = unsent === 0 ? [] : (await pool.query(`SELECT chat_outbox.partition_of(chat_id, 6) AS p, count(*) FILTER (WHERE sent_at IS NULL) AS unsent,
	count(*) AS n FROM consumers.outbox GROUP BY 1 ORDER BY 1`)).rows;
check(`every outbox row marked sent (${unsent} unsent)`, unsent === 0, JSON.stringify({ cursors, byPartition }));
say(`the Workers reported ${workerErrors} connection error(s) during the faults`);
console.log(`FIGURES sent=${want} lost=${lost} twice=${twice} disorder=${disorder} failover_gap_ms=${back - killedAt} elected_ms=${electedAt - killedAt} relay_after_election_ms=${firstAdded - electedAt} reshard_gap_ms=${reshardGap}`);
await Promise.all(workers.map((w) => w.close()));
admin.disconnect();
await pool.end();
restarted.kill('SIGKILL');
finish();
