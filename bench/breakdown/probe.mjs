// bench/breakdown/probe.mjs - where the time of one paced message goes, stage by stage (medians of
// PROBE_COUNT messages, default 30), then the slowest 1% message by message.
// Stages: commit = send_message round trip (with its WAL flush); relay = job timestamp - COMMIT ack (negative:
// the relay wrote the job before the client saw the ack); fetch = daemon processedOn - job timestamp; inbox =
// inbox transaction start - processedOn; shown = socket.io client receipt - inbox transaction start (the inbox
// INSERT, its COMMIT, the push); total = send -> shown. Redis job times are whole milliseconds.
import { createRequire } from 'node:module';
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const pg = require('pg');
const { io } = require('socket.io-client');
const Redis = require('ioredis');
const { signToken } = await import('../../tests/harness/jwt.mjs');
const db = new pg.Client({ connectionString: process.env.PGURL }); await db.connect();
const r = new Redis(process.env.REDIS_URL);
const s = io(`http://127.0.0.1:${process.env.PORT}`, { auth: { token: signToken({ chats: [1] }, process.env.JWT_SECRET) }, transports: ['websocket'] });
await new Promise((ok) => s.once('connect', ok));
const shown = new Map();
s.on('message', (m) => shown.set(m.id, performance.timeOrigin + performance.now()));
const rows = [];
const COUNT = Number(process.env.PROBE_COUNT || 30);
for (let i = 0; i < COUNT; i++) {
  const t0 = performance.timeOrigin + performance.now();
  const { rows: [m] } = await db.query('SELECT id FROM consumers.send_message(1, $1)', ['m' + i]);
  const t1 = performance.timeOrigin + performance.now();
  rows.push({ id: m.id, t0, t1 });
  await new Promise((ok) => setTimeout(ok, 100));
}
await new Promise((ok) => setTimeout(ok, 500));
const q = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)].toFixed(2);
const c = { commit: [], relay: [], fetch: [], inbox: [], shown: [], total: [], finished: [] };
const per = []; // one message's stages, to find where the slowest ones lost their time
for (const x of rows) {
  const h = await r.hgetall(`bull:chat-messages:${x.id}`);
  const { rows: [ib] } = await db.query('SELECT extract(epoch from received_at)*1000 AS rec FROM workers.inbox WHERE message_id=$1', [x.id]);
  const m = {
    commit: x.t1 - x.t0, relay: +h.timestamp - x.t1, fetch: +h.processedOn - +h.timestamp, inbox: +ib.rec - +h.processedOn,
    shown: shown.get(x.id) - +ib.rec, total: shown.get(x.id) - x.t0, finished: +h.finishedOn - shown.get(x.id),
  };
  for (const k of Object.keys(c)) c[k].push(m[k]);
  per.push({ i: per.length, ...m });
}
console.log(Object.fromEntries(Object.entries(c).map(([k, v]) => [k, q([...v])])));
// the slowest 1% (at least 3), stage by stage: a tail made in one stage shows there
const slow = per.sort((a, b) => b.total - a.total).slice(0, Math.max(3, Math.ceil(per.length / 100)));
console.log('slowest:');
for (const m of slow) console.log(`  #${m.i}  ` + Object.entries(m).filter(([k]) => k !== 'i').map(([k, v]) => `${k} ${v.toFixed(2)}`).join('  '));
process.exit(0);
