// tests/consumer/leases_watch.mjs - consumer.leases' watcher, one process for the whole suite (a redis-cli per
// partition per poll forked 80 processes a second and took CPU from the daemons it watches).
//   node leases_watch.mjs <queue> <violations file> <redis url of partition 0> <of partition 1> ...
// Every 50 ms, per partition, one script reads the owner of every active job's lock (a token starts with
// the daemon's identity): two identities at once is a violation, appended to the file. A shard that is
// down or loading is skipped until it answers again.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../package.json', import.meta.url));
const IORedis = require('ioredis');

const [queue, out, ...urls] = process.argv.slice(2);
const OWNERS = `local seen, n = {}, 0
for _, id in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local v = redis.call("GET", ARGV[1] .. id .. ":lock")
  local who = v and string.match(v, "^([^:]*):")
  if who and not seen[who] then seen[who] = true; n = n + 1 end
end
return n`;
const links = urls.map((url) => new IORedis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => 50 }));
for (const l of links) l.on('error', () => {});

async function poll() {
	await Promise.all(links.map(async (link, k) => {
		try {
			const n = await link.eval(OWNERS, 1, `bull:${queue}-p${k}:active`, `bull:${queue}-p${k}:`);
			if (n > 1) fs.appendFileSync(out, `partition ${k}: ${n} owners\n`);
		} catch { /* the shard is down or loading */ }
	}));
	setTimeout(poll, 50);
}
process.on('SIGTERM', () => process.exit(0));
poll();
