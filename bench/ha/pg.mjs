// bench/ha/pg.mjs - see run.sh (mode pg).
import { execSync } from 'node:child_process';
import { Redis, receiver, Sender, summary, sleep, waitUntil, env } from './common.mjs';

const FAILOVERS = Number(env('FAILOVERS'));
const sh = (cmd) => execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const pgCtl = (data, args) => sh(`${(process.env.AS_PG ?? '')} ${env('PG_BIN')}/pg_ctl -D ${data} -l ${data}.log ${args}`);
const nodes = env('NODES').split(' ').map((s) => ({ data: s.split(':')[0], port: Number(s.split(':')[1]) }));
const url = (node) => `postgresql://postgres@127.0.0.1:${node.port}/chat`;
const psql = (node, sql) => sh(`psql -XAtq -v ON_ERROR_STOP=1 ${url(node)} -c "${sql}"`);
const redis = new Redis(env('REDIS_URL'));

const { daemon, client, shown } = await receiver();
await waitUntil('the client to connect', () => client.socket.connected, 10000);
let [primary, standby] = nodes;
let sender = new Sender(url(primary));
let n = 0;
let sending = true;
const loop = (async () => {
	while (sending) {
		await sender.send(++n);
		await sleep(20);
	}
})();

const relayed = [];
const shownAfter = [];
for (let round = 1; round <= FAILOVERS; round++) {
	await sleep(2000);
	const tKill = Date.now();
	pgCtl(primary.data, '-m immediate stop');
	pgCtl(standby.data, '-w promote');
	const tPromoted = Date.now();
	const old = sender;
	sender = new Sender(url(standby));
	old.close();
	let firstId = null;
	await waitUntil('a send to commit on the new primary', () => (firstId = [...sender.committed.keys()][0]) !== undefined, 30000);
	await waitUntil('it to reach Redis', async () => (await redis.exists(`bull:chat-messages:${firstId}`)) === 1, 30000, 5);
	relayed.push(Date.now() - tKill);
	await waitUntil('it to be shown', () => shown.has(firstId), 60000);
	shownAfter.push(shown.get(firstId) - tKill);
	console.log(`failover ${round}: promoted in ${tPromoted - tKill} ms, first message relayed ${relayed.at(-1)} ms ` +
		`and shown ${shownAfter.at(-1)} ms after the stop`);
	// the old primary becomes the new one's synchronous standby
	sh(`rm -rf ${primary.data}`);
	sh(`${(process.env.AS_PG ?? '')} ${env('PG_BIN')}/pg_basebackup -h 127.0.0.1 -p ${standby.port} -U postgres -D ${primary.data} -R -X stream -c fast`);
	sh(`echo "port = ${primary.port}" >> ${primary.data}/postgresql.conf`);
	sh(`sed -i '/^synchronous_standby_names/d' ${primary.data}/postgresql.auto.conf`);
	pgCtl(primary.data, '-w start');
	psql(standby, "ALTER SYSTEM SET synchronous_standby_names = '*'");
	psql(standby, 'SELECT pg_reload_conf()');
	await waitUntil('the copy to stream synchronously', () => psql(standby, 'SELECT sync_state FROM pg_stat_replication') === 'sync', 30000);
	[primary, standby] = [standby, primary];
}
sending = false;
await loop;
console.log(summary('Postgres primary stop -> first message relayed by the new primary', relayed));
console.log(summary('Postgres primary stop -> that message shown', shownAfter));
sender.close();
redis.disconnect();
client.socket.close();
await daemon.stop('SIGTERM');
process.exit(0);
