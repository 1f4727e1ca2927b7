// The benchmark runner: node bench/lib/main.mjs [--quick] [--sustained MINUTES] [--only a,b] [--out DIR]
// Started by bench/run.sh, which provides PostgreSQL and Redis (env PGURL, BASELINE_URL, REDIS_URL,
// REDIS_PORT, OURS_EXT, ...). Prints one report (markdown tables) and writes results.json + plots.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { allVariants, baseline, ours, ROOT, sql } from "./variants.mjs";
import * as D from "./drivers.mjs";
import { summary, ms, range, num, table, sleep, now } from "./stats.mjs";
import { run, costSampler, treeCpu, statFields } from "./proc.mjs";
import { versions, pg, IORedis } from "./deps.mjs";
import { plotLatency, plotThroughput } from "./plot.mjs";

const argv = process.argv.slice(2);
const flag = (n) => argv.includes(`--${n}`);
const opt = (n, d) => { const i = argv.indexOf(`--${n}`); return i >= 0 ? argv[i + 1] : d; };
const QUICK = flag("quick");
const SUSTAINED = Number(opt("sustained", 0));
const ONLY = opt("only", "latency,throughput,raw,recovery,cost,fanout,sustained").split(",");
const OUT = path.resolve(opt("out", path.join(ROOT, "build/bench")));
fs.mkdirSync(OUT, { recursive: true });

const P = QUICK
  ? { latRuns: 1, latRunsPolling: 1, tpSenders: [1, 8, 32, 128], tpSeconds: 3, tpDrainMs: 15000, recCount: 5000, costCount: 5000, fan: [100, 1000], fanRepeats: 2, rawSeconds: 3 }
  : { latRuns: 7, latRunsPolling: 2, tpSenders: [1, 8, 32, 128], tpSeconds: 10, tpDrainMs: 60000, recCount: 100000, costCount: 20000, fan: [1000, 10000], fanRepeats: 3, rawSeconds: 10 };

const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const results = { date: new Date().toISOString(), quick: QUICK, params: P, machine: {}, versions: { ...versions }, latency: {}, floor: {}, throughput: {}, raw: {}, rawCpu: {}, recovery: {}, v1Outage: null, fanout: {}, cost: {}, sustained: null, unavailable: {} };

const redis = {
  down: () => run("bash", [path.join(ROOT, "bench/lib/redisctl.sh"), "down"]),
  up: () => run("bash", [path.join(ROOT, "bench/lib/redisctl.sh"), "up"]),
};

async function machineInfo() {
  const v = async (cmd, args) => { try { return (await run(cmd, args)).stdout.trim(); } catch { return "?"; } };
  results.machine = {
    cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memGB: Math.round(os.totalmem() / 2 ** 30),
    os: (fs.existsSync("/etc/os-release") ? (fs.readFileSync("/etc/os-release", "utf8").match(/^PRETTY_NAME="?(.*?)"?$/m) || [])[1] : os.type()),
    kernel: os.release(), load: os.loadavg().map((x) => x.toFixed(2)).join(" "),
  };
  // The disk Postgres and Redis write to, and whether it trims online: with the `discard` mount option
  // every truncate and unlink (the outbox's rotation, Redis's AOF rewrite) trims synchronously and the
  // commits' fsyncs wait behind it (docs/deploy.md, "The disk").
  const mount = (await v("findmnt", ["-n", "-o", "SOURCE,FSTYPE,OPTIONS", "-T", process.env.H_DIR || ROOT])).split(/\s+/);
  results.machine.disk = mount.length === 3
    ? `${mount[0]} ${mount[1]}, ${mount[2].split(",").includes("discard") ? "online discard (mounted with discard)" : "no online discard"}`
    : "?";
  results.versions.node = process.version;
  results.versions.postgres = await v("psql", ["-XAtq", process.env.PGURL, "-c", "SHOW server_version"]);
  results.versions.redis = (await v("redis-server", ["--version"])).match(/v=(\S+)/)?.[1] || "?";
}

async function withVariant(v, fn) {
  await v.reset();
  await v.start();
  try { return await fn(); } finally { await v.stop().catch((e) => log(`${v.name}: stop: ${e.message}`)); }
}

const variants = allVariants();
const avail = variants.filter((v) => v.available);
for (const v of variants) if (!v.available) results.unavailable[v.name] = v.why;
const byName = (n) => variants.find((v) => v.name === n);

async function sectionLatency() {
  for (const v of avail) {
    const runs = v.name.includes("polling") ? P.latRunsPolling : P.latRuns;
    results.latency[v.name] = [];
    await withVariant(v, async () => {
      for (let r = 0; r < runs; r++) {
        const res = await D.latency(v, { count: 100, intervalMs: 100, drainMs: v.name.includes("polling") ? 5000 : 3000 });
        log(`latency ${v.name} run ${r + 1}/${runs}: p50 ${ms(res.p50)} p95 ${ms(res.p95)} p99 ${ms(res.p99)} max ${ms(res.max)} shown ${res.shown}/${res.sent}`);
        results.latency[v.name].push(res);
      }
    });
  }
  // what one hop costs here, paced the same way: the latency rows above are made of such hops
  const c = new pg.Client({ connectionString: process.env.PGURL });
  await c.connect();
  try {
    results.floor["Postgres SELECT 1"] = await D.pacedRoundTrips(() => c.query("SELECT 1"));
    // a one-row INSERT and its COMMIT, with and without waiting for the WAL flush: the difference
    // is what one durable commit costs here, and every message's path holds two of them
    await c.query("CREATE TABLE IF NOT EXISTS public.bench_floor (id bigserial PRIMARY KEY, body text)");
    for (const sync of ["on", "off"]) {
      await c.query(`SET synchronous_commit = ${sync}`);
      results.floor[`Postgres INSERT + COMMIT, synchronous_commit ${sync}`] = await D.pacedRoundTrips(() => c.query("INSERT INTO public.bench_floor (body) VALUES ('floor')"));
    }
    await c.query("DROP TABLE public.bench_floor");
  } finally { await c.end(); }
  const r = new IORedis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 });
  try { results.floor["Redis PING"] = await D.pacedRoundTrips(() => r.ping()); } finally { r.disconnect(); }
  for (const [k, f] of Object.entries(results.floor)) log(`round trip ${k}: paced p50 ${ms(f.paced.p50)} p99 ${ms(f.paced.p99)}, back to back p50 ${ms(f.backToBack.p50)}`);
}

async function sectionThroughput() {
  for (const v of avail.filter((x) => !x.name.includes("polling"))) {
    results.throughput[v.name] = [];
    for (const n of P.tpSenders) {
      await withVariant(v, async () => {
        const res = await D.throughput(v, { senders: n, seconds: P.tpSeconds, drainMs: P.tpDrainMs });
        log(`throughput ${v.name} x${n}: delivered ${num(res.deliveredRate)}/s sent ${num(res.sendRate)}/s p50 ${ms(res.p50)} p99 ${ms(res.p99)} backlog ${res.backlog} ${res.drained ? `drained in ${res.drainSeconds.toFixed(1)} s` : "NOT drained"}`);
        delete res.samples;
        results.throughput[v.name].push(res);
      });
    }
  }
}

const redisPid = () => Number(fs.readFileSync(process.env.REDIS_PIDFILE, "utf8").trim());
async function postmasterPid() { // the parent of a backend, read while that backend lives
  const c = new pg.Client({ connectionString: process.env.PGURL });
  await c.connect();
  try {
    const pid = (await c.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
    return Number(statFields(pid)[1]); // ppid
  } finally { await c.end(); }
}

async function pgbench(url, script, clients, seconds) {
  const f = path.join(process.env.BENCH_LOG_DIR || "/tmp", `pgbench-${process.pid}.sql`);
  fs.writeFileSync(f, script);
  const { stdout } = await run("pgbench", ["-n", "-M", "prepared", "-f", f, "-c", String(clients), "-j", String(Math.min(clients, 2)), "-T", String(seconds), url]);
  return Number(stdout.match(/tps = ([\d.]+)/)?.[1]);
}

async function sectionRaw() {
  // The database's own limit for one send, no relay draining (baseline relay not running).
  const v2script = `\\set chat random(1, 128)
BEGIN;
WITH m AS (INSERT INTO consumers.messages (chat_id, body) VALUES (:chat, 'pgbench') RETURNING id, chat_id, body)
INSERT INTO consumers.outbox (event, payload) SELECT 'message.created', to_jsonb(m) FROM m;
NOTIFY consumers_outbox;
COMMIT;
`;
  // one row of raw rates: `script` by pgbench with each sender count, the variant's tables reset before each
  const rawRow = async (label, variant, script) => {
    results.raw[label] = {};
    for (const n of P.tpSenders) {
      await variant.reset();
      results.raw[label][n] = await pgbench(process.env.BASELINE_URL, script, n, P.rawSeconds);
      log(`raw ${variant.name} x${n}: ${num(results.raw[label][n])} tps`);
    }
    await variant.reset();
  };
  await rawRow("v2 send txn (pgbench)", baseline("v2"), v2script);
  const q = baseline("pgq");
  if (q.available) { // the pgq variant's send: the same transaction with pgq.insert_event as the outbox
    const pgqScript = `\\set chat random(1, 128)
BEGIN;
WITH m AS (INSERT INTO consumers.messages (chat_id, body) VALUES (:chat, 'pgbench') RETURNING id, chat_id, body)
SELECT pgq.insert_event('consumers_outbox', 'message.created', to_jsonb(m)::text) FROM m;
NOTIFY consumers_outbox;
COMMIT;
`;
    await rawRow("pgq send txn (pgbench)", q, pgqScript);
  }
  const o = ours();
  if (process.env.OURS_EXT === "1") { // needs only the extension, not the daemon
    // the relay lives inside Postgres: pause it, so this row is the database's own limit like v2's
    await sql(process.env.PGURL, "ALTER SYSTEM SET chat_outbox.relay_enabled = off");
    await sql(process.env.PGURL, "SELECT pg_reload_conf()");
    results.raw["ours send_message (pgbench)"] = {};
    const pm = await postmasterPid();
    for (const n of P.tpSenders) {
      await o.reset();
      // CPU per send: every Postgres process, and pgbench (reaped by this process, so in its cutime)
      const pg0 = treeCpu(pm), lg0 = treeCpu(process.pid);
      const tps = await pgbench(process.env.PGURL, "\\set chat random(1, 128)\nSELECT consumers.send_message(:chat, 'pgbench');\n", n, P.rawSeconds);
      const sends = tps * P.rawSeconds;
      results.raw["ours send_message (pgbench)"][n] = tps;
      results.rawCpu[n] = { postgres: (treeCpu(pm) - pg0) / sends, loadgen: (treeCpu(process.pid) - lg0) / sends };
      log(`raw ours x${n}: ${num(tps)} tps; CPU per send: postgres ${num(results.rawCpu[n].postgres * 1e6)} us, pgbench ${num(results.rawCpu[n].loadgen * 1e6)} us`);
    }
    await sql(process.env.PGURL, "ALTER SYSTEM RESET chat_outbox.relay_enabled");
    await sql(process.env.PGURL, "SELECT pg_reload_conf()");
    await o.reset();
  }
}

async function sectionRecovery() {
  // v1: the write-up's loss scenario (Consumers redeployed while Redis is down).
  const v1 = byName("v1");
  await withVariant(v1, async () => {
    results.v1Outage = await D.v1Outage(v1, { redis, downSeconds: QUICK ? 3 : 5 });
    log(`v1 outage + Consumers deploy: saved ${results.v1Outage.saved} shown ${results.v1Outage.shown} lost ${results.v1Outage.lost}`);
  });
  for (const v of avail.filter((x) => x.name === "v2" || x.name === "pgq" || x.name === "ours")) {
    await withVariant(v, async () => {
      const res = await D.recovery(v, { count: P.recCount, senders: 32, redis });
      log(`recovery ${v.name}: ${res.count} sent in ${res.sendSeconds.toFixed(1)} s while Redis down; up -> all shown ${res.upToAllSeconds.toFixed(2)} s (${num(res.drainRate)}/s) ${res.allShown ? "" : "NOT ALL SHOWN"}`);
      results.recovery[v.name] = res;
    });
  }
}

// WAL written so far, in bytes (the cluster's insert position; the variants run one at a time)
async function walPosition() {
  return Number((await sql(process.env.PGURL, "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') AS b")).rows[0].b);
}

async function sectionCost() {
  // Steady state: the same pipeline with Redis up, `recCount` messages from 8 senders, until all shown.
  for (const v of avail.filter((x) => x.name === "v2" || x.name === "pgq" || x.name === "ours")) {
    await withVariant(v, async () => {
      // the whole machine's share: Redis and every Postgres process (senders' backends, the inbox
      // writes, our relay) and this process (the senders and the receiving socket), so the pipeline's
      // cost can be set against the send's own (the raw section measures that)
      const extra = { pids: { redis: redisPid(), "load generator (bench process)": process.pid }, trees: { "postgres (all processes)": await postmasterPid() } };
      const wal0 = await walPosition();
      const res = await D.recovery(v, { count: P.costCount, senders: 8, redis: null, extra });
      res.walBytesPerMessage = (await walPosition() - wal0) / Math.max(1, res.count);
      log(`cost ${v.name}: ${res.count} sent in ${res.sendSeconds.toFixed(1)} s, all shown ${res.upToAllSeconds.toFixed(2)} s after the last send; ` +
        Object.entries(res.cost).map(([k, c]) => `${k} ${c.cpuSeconds.toFixed(2)} CPU s, peak ${c.peakRssMB.toFixed(0)} MB`).join("; ") +
        `; WAL ${num(res.walBytesPerMessage)} bytes per message`);
      results.cost[v.name] = res;
    });
  }
}

async function sectionFanout() {
  for (const v of avail.filter((x) => x.name === "v2" || x.name === "ours")) {
    results.fanout[v.name] = [];
    for (const n of P.fan) {
      await withVariant(v, async () => {
        try {
          const res = await D.fanout(v, { sockets: n, repeats: P.fanRepeats });
          log(`fan-out ${v.name} ${n} sockets: connect ${res.connectSeconds.toFixed(1)} s; ` + res.runs.map((r) => `last ${ms(r.last)} (${r.received}/${n})`).join(", "));
          results.fanout[v.name].push(res);
        } catch (e) { log(`fan-out ${v.name} ${n}: ${e.message}`); results.fanout[v.name].push({ sockets: n, error: e.message }); }
      });
    }
  }
}

async function sectionSustained(minutes) {
  const o = byName("ours");
  const v = o.available ? o : byName("v2");
  const tp = results.throughput[v.name] || [];
  const max = Math.max(0, ...tp.map((r) => r.deliveredRate));
  const rate = Number(opt("rate", 0)) || Math.max(10, Math.round((max || 200) / 2));
  // Sent rows are kept for chat_outbox.retention (default 1d) and then purged by the relay; a run
  // of minutes shows the purge keeping the table flat only with a retention shorter than the run.
  const retention = opt("retention", "5min");
  // --sustained-relay off: the same sends with the relay paused, the send alone (its commit's tails
  // without any relay, Redis or inbox work beside it); nothing is shown
  const relayOff = v.kind === "ours" && opt("sustained-relay", "on") === "off";
  log(`sustained ${v.name}: ${minutes} min at ${rate} msg/s${v.kind === "ours" ? `, chat_outbox.retention = ${retention}` : ""}${relayOff ? ", relay paused" : ""}`);
  const samples = [];
  if (v.kind === "ours") {
    await sql(process.env.PGURL, `ALTER SYSTEM SET chat_outbox.retention = '${retention.replace(/'/g, "")}'`);
    if (relayOff) await sql(process.env.PGURL, "ALTER SYSTEM SET chat_outbox.relay_enabled = off");
    await sql(process.env.PGURL, "SELECT pg_reload_conf()");
  }
  const url = v.kind === "ours" ? process.env.PGURL : process.env.BASELINE_URL;
  await withVariant(v, async () => {
    await sql(url, "SELECT pg_stat_reset()"); // the table counters below are this run's
    const sock = await D.connect(v, [1]);
    const got = new Map();
    sock.on("message", (m) => got.set(m.body, now()));
    const sender = v.sender(16);
    const sentAt = new Map(), ackAt = new Map();
    // the load generator's own stalls (GC, a busy event loop) delay what it timestamps: measured per window
    const LOOP_MS = 5; // the histogram samples every 5 ms and records the whole interval: the delay is what exceeds it
    const loop = monitorEventLoopDelay({ resolution: LOOP_MS });
    loop.enable();
    const tEnd = now() + minutes * 60000;
    let i = 0, inflight = 0;
    const t0 = now();
    const window = 30000;
    let nextSample = t0 + window, winBodies = [], winSkipped = 0, prev = null;
    // A window is evaluated one window later (its messages have had >= 30 s to arrive), so sampling
    // never pauses the senders.
    const evaluate = async (w) => {
      const lat = w.bodies.filter((b) => got.has(b)).map((b) => got.get(b) - sentAt.get(b));
      // the send's own part (its commit acknowledged): a tail here is Postgres's, before any relay runs
      const ack = summary(w.bodies.filter((b) => ackAt.has(b)).map((b) => ackAt.get(b) - sentAt.get(b)));
      // and the rest: from the acknowledged commit to shown (relay, Redis, daemon, inbox, socket)
      const after = summary(w.bodies.filter((b) => ackAt.has(b) && got.has(b)).map((b) => Math.max(0, got.get(b) - ackAt.get(b))));
      const s = summary(lat);
      samples.push({ t: w.t, p50: s.p50, p99: s.p99, ackP50: ack.p50, ackP99: ack.p99, afterP50: after.p50, afterP99: after.p99, loopP99: w.loopP99, loopMax: w.loopMax, shown: lat.length, sent: w.bodies.length, skipped: w.skipped, unsent: w.unsent, ...w.st });
      log(`sustained t=${w.t}s p50 ${ms(s.p50)} p99 ${ms(s.p99)} ack p50 ${ms(ack.p50)} p99 ${ms(ack.p99)} after commit p50 ${ms(after.p50)} p99 ${ms(after.p99)} generator's event loop delay p99 ${ms(w.loopP99)} max ${ms(w.loopMax)} shown ${lat.length}/${w.bodies.length}${w.skipped ? ` (${w.skipped} sends skipped)` : ""} outbox ${num(w.st?.bytes / 1024)} kB dead ${w.st?.dead}`);
      for (const b of w.bodies) { sentAt.delete(b); got.delete(b); ackAt.delete(b); }
    };
    while (now() < tEnd) {
      const due = t0 + (i * 1000) / rate;
      const w = due - now();
      if (w > 0) await sleep(w);
      const body = `sus-${i++}`;
      // a send that cannot start (256 already waiting for Postgres) is counted as skipped, not as lost
      if (inflight < 256) {
        sentAt.set(body, now()); winBodies.push(body);
        inflight++; sender.send(1, body).then(() => ackAt.set(body, now()), () => {}).finally(() => inflight--);
      } else winSkipped++;
      if (now() >= nextSample) {
        const cur = { t: Math.round((now() - t0) / 1000), bodies: winBodies, skipped: winSkipped, st: await v.outboxStats(), unsent: await v.unsent(),
          loopP99: Math.max(0, loop.percentile(99) / 1e6 - LOOP_MS), loopMax: Math.max(0, loop.max / 1e6 - LOOP_MS) };
        loop.reset();
        if (prev) await evaluate(prev);
        prev = cur; winBodies = []; winSkipped = 0; nextSample += window;
      }
    }
    await sleep(3000);
    loop.disable();
    if (prev) await evaluate(prev);
    sock.close(); await sender.close();
  });
  if (v.kind === "ours") {
    await sql(process.env.PGURL, "ALTER SYSTEM RESET chat_outbox.retention");
    await sql(process.env.PGURL, "ALTER SYSTEM RESET chat_outbox.relay_enabled");
    await sql(process.env.PGURL, "SELECT pg_reload_conf()");
  }
  // what the run did to the outbox's tables (and the path's others): row versions and every vacuum
  const tables = await sql(url, `SELECT schemaname || '.' || relname AS name, n_tup_ins, n_tup_upd, n_tup_del, n_dead_tup, autovacuum_count, autoanalyze_count, vacuum_count
                                   FROM pg_stat_user_tables WHERE schemaname IN ('consumers', 'workers') ORDER BY 1`)
    .then((r) => r.rows, (e) => { log(`sustained: pg_stat_user_tables: ${e.message}`); return null; });
  results.sustained = { variant: relayOff ? `${v.name}, relay paused (the send alone)` : v.name, rate, minutes, retention: v.kind === "ours" ? retention : null, samples, tables };
}

// ---------------- report ----------------
// CPU per message, whole machine: what the end-to-end path costs set against the send alone. On
// cores that are full, end-to-end can reach at most raw x (raw CPU per send / e2e CPU per message).
function cpuBudget() {
  const raw = results.rawCpu[8];
  const us = (x) => (Number.isNaN(x) ? "-" : num(x * 1e6));
  const rows = [];
  if (raw) rows.push(["send_message alone (pgbench, 8 clients, relay paused)", us(raw.postgres), "-", "-", us(raw.loadgen), us(raw.postgres + raw.loadgen), "-"]);
  const totals = {};
  for (const n of ["v2", "pgq", "ours"]) {
    const r = results.cost[n];
    if (!r || !r.cost["postgres (all processes)"]) continue;
    const per = (c) => c.cpuSeconds / Math.max(1, r.count);
    const pgc = per(r.cost["postgres (all processes)"]), red = per(r.cost.redis), lg = per(r.cost["load generator (bench process)"]);
    // our relay and inbox backend are Postgres processes, in the Postgres tree already; v2's relay is Node
    const svc = Object.entries(r.cost).filter(([k]) => !["postgres (all processes)", "redis", "load generator (bench process)"].includes(k) && !(n === "ours" && ["relay", "inbox backend"].includes(k)))
      .reduce((a, [, c]) => a + per(c), 0);
    totals[n] = pgc + red + svc + lg;
    rows.push([`${n} end to end (8 senders, steady)`, us(pgc), us(red), us(svc), us(lg), us(totals[n]), num(r.walBytesPerMessage)]);
  }
  if (!rows.length) return "";
  const L = [`\n### CPU per message, whole machine (µs; steady run and the raw section's 8-client pgbench), and WAL\n`,
    table(["path", "Postgres (all processes)", "Redis", "relay/daemon/workers outside Postgres", "load generator", "total", "WAL bytes per message"], rows)];
  if (raw && totals.ours) L.push(`\nWith the cores full, ours end to end can reach at most ${num(100 * (raw.postgres + raw.loadgen) / totals.ours)}% of the raw send rate ` +
    `(${num(100 * raw.postgres / (totals.ours - results.cost.ours.cost["load generator (bench process)"].cpuSeconds / Math.max(1, results.cost.ours.count)))}% counting Postgres against everything but the load generator).`);
  return L.join("\n");
}

const notRun = (name, section) => results.unavailable[name] ? `${name.startsWith("ours") ? "ours: " : ""}not available (${results.unavailable[name]})`
  : results[`${section}Error`] ? `failed: ${results[`${section}Error`]}` : ONLY.includes(section) ? "no result" : "not run";
function report() {
  const L = [];
  const na = (name) => `| ${name} | not available: ${results.unavailable[name]} |`;
  L.push(`## Latency: 100 messages, one every 100 ms, send -> shown at a socket.io client`);
  L.push(`Ranges are over runs (as the write-up reports them); "all" pools every sample of every run.\n`);
  const rows = [];
  for (const v of variants) {
    const runs = results.latency[v.name];
    if (!runs) { rows.push([v.name, notRun(v.name, "latency"), "", "", "", "", "", "", ""]); continue; }
    const all = summary(runs.flatMap((r) => r.samples));
    rows.push([v.name, range(runs.map((r) => r.p50)), range(runs.map((r) => r.p95)), range(runs.map((r) => r.p99)), range(runs.map((r) => r.max)),
      `${ms(all.p50)} / ${ms(all.p99)}`, range(runs.map((r) => r.ack?.p50 ?? NaN)), `${runs.reduce((a, r) => a + r.shown, 0)}/${runs.reduce((a, r) => a + r.sent, 0)}`, String(runs.length)]);
  }
  L.push(table(["variant", "p50", "p95", "p99", "max", "all p50 / p99", "send ack p50", "shown", "runs"], rows));
  L.push(`\nsend ack = the sender's call returned (its commit is durable), the part of the latency before any relay runs.`);
  if (Object.keys(results.floor).length) {
    L.push(`\nOne request and its answer, 100 one every 100 ms as above, then 100 back to back:\n`);
    L.push(table(["round trip", "paced p50", "paced p99", "back to back p50"],
      Object.entries(results.floor).map(([k, f]) => [k, ms(f.paced.p50), ms(f.paced.p99), ms(f.backToBack.p50)])));
  }

  L.push(`\n## Throughput: N concurrent senders for ${P.tpSeconds} s`);
  L.push(`end-to-end = all shown / (first send -> last shown); in window = shown during the ${P.tpSeconds} s window; sent = committed sends/s; backlog = committed but not shown at the end of the window; latency over all shown.\n`);
  const trows = [];
  for (const v of variants.filter((x) => !x.name.includes("polling"))) {
    const rs = results.throughput[v.name];
    if (!rs) { trows.push([v.name, "-", notRun(v.name, "throughput"), "", "", "", "", "", ""]); continue; }
    for (const r of rs) trows.push([v.name, r.senders, num(r.deliveredRate), num(r.deliveredInWindowRate), num(r.sendRate), ms(r.p50), ms(r.p99), num(r.backlog), r.drained ? `${r.drainSeconds.toFixed(1)} s` : `not in ${P.tpDrainMs / 1000} s`]);
  }
  for (const [k, byN] of Object.entries(results.raw)) for (const [n, tps] of Object.entries(byN)) trows.push([k, n, "-", "-", num(tps), "-", "-", "-", "-"]);
  if (!results.raw["ours send_message (pgbench)"]) trows.push(["ours send_message (pgbench)", "-", process.env.OURS_EXT === "1" ? notRun("-", "raw") : "ours: not available (extension)", "", "", "", "", "", ""]);
  trows.push(["ours batch send", "-", "n/a: the API has no batch send (send_message only)", "", "", "", "", "", ""]);
  L.push(table(["variant", "senders", "delivered end-to-end msg/s", "in window msg/s", "sent msg/s", "p50", "p99", "backlog", "drain after"], trows));

  L.push(`\n## Recovery: ${num(P.recCount)} messages sent while Redis is down, then Redis up\n`);
  const rrows = [];
  if (results.v1Outage) rrows.push(["v1 (Consumers redeployed while Redis down, as in the write-up)", num(results.v1Outage.saved) + " saved", "-", "-", `${num(results.v1Outage.shown)} shown, **${num(results.v1Outage.lost)} lost**`]);
  for (const n of ["v2", "pgq", "ours"]) {
    const r = results.recovery[n];
    if (!r) { rrows.push([n, notRun(n, "recovery"), "", "", ""]); continue; }
    rrows.push([n, `${num(r.count)} in ${r.sendSeconds.toFixed(1)} s`, `${r.upToAllSeconds.toFixed(2)} s`, `${num(r.drainRate)} msg/s`, `${num(r.shown)} shown${r.allShown ? "" : " (NOT ALL)"}`]);
  }
  L.push(table(["variant", "sent while down", "Redis up -> all shown", "drain rate", "result"], rrows));

  L.push(`\n## Fan-out: one message to N sockets in one room (send -> last socket)\n`);
  const frows = [];
  for (const n of ["v2", "ours"]) {
    const rs = results.fanout[n];
    if (!rs) { frows.push([n, "-", notRun(n, "fanout"), "", ""]); continue; }
    for (const r of rs) frows.push([n, num(r.sockets), r.error ? `error: ${r.error}` : range(r.runs.map((x) => x.last)), r.error ? "" : range(r.runs.map((x) => x.p50)), r.error ? "" : `${r.runs.map((x) => x.received).join(", ")} (connect ${r.connectSeconds.toFixed(1)} s)`]);
  }
  L.push(table(["variant", "sockets", "last socket", "median socket", "received per run"], frows));

  L.push(`\n## Cost per 100,000 messages: CPU seconds (utime+stime, /proc/<pid>/stat) and peak RSS (sampled VmRSS every 200 ms)`);
  L.push(`steady = ${num(P.costCount)} messages from 8 senders with Redis up, until all shown; outage = the recovery run above (send while Redis down + drain). Scaled to 100,000 when fewer were sent.\n`);
  const crows = [];
  for (const n of ["v2", "pgq", "ours"]) {
    for (const [label, r, sec] of [["steady", results.cost[n], "cost"], ["outage", results.recovery[n], "recovery"]]) {
      if (!r) { crows.push([n, label, "-", notRun(n, sec), ""]); continue; }
      const scale = 100000 / Math.max(1, r.count);
      for (const [proc, c] of Object.entries(r.cost)) crows.push([n, label, proc, (c.cpuSeconds * scale).toFixed(2), num(c.peakRssMB, 1)]);
    }
  }
  L.push(table(["variant", "run", "process", "CPU s / 100k msgs", "peak RSS MB"], crows));
  const budget = cpuBudget();
  if (budget) L.push(budget);

  if (results.sustained) {
    const s = results.sustained;
    L.push(`\n## Sustained: ${s.variant}, ${s.minutes} min at ${s.rate} msg/s (30 s windows)${s.retention ? `, chat_outbox.retention = ${s.retention}` : ""}\n`);
    L.push(table(["t (s)", "p50", "p99", "p99/p50", "send ack p50", "send ack p99", "after commit p50", "after commit p99", "generator's loop delay p99 / max", "shown/sent", "skipped", "unsent", "outbox size", "dead tuples"],
      s.samples.map((x) => [x.t, ms(x.p50), ms(x.p99), (x.p99 / x.p50).toFixed(1), ms(x.ackP50), ms(x.ackP99), ms(x.afterP50), ms(x.afterP99), `${ms(x.loopP99)} / ${ms(x.loopMax)}`, `${x.shown}/${x.sent}`, x.skipped || 0, x.unsent, `${num(x.bytes / 1024)} kB`, x.dead])));
    if (s.tables) {
      L.push(`\npg_stat_user_tables at the end of the run (counters reset at its start):\n`);
      L.push(table(["table", "inserted", "updated", "deleted", "dead tuples", "autovacuums", "autoanalyzes", "vacuums"],
        s.tables.map((r) => [r.name, num(r.n_tup_ins), num(r.n_tup_upd), num(r.n_tup_del), num(r.n_dead_tup), r.autovacuum_count, r.autoanalyze_count, r.vacuum_count])));
    }
    // the issue's terms, counted (never asserted): windows after the first 5 minutes
    const late = s.samples.filter((x) => x.t > 300);
    const total = (f) => s.samples.reduce((n, x) => n + (f(x) || 0), 0);
    const within = (p99, p50) => `${late.filter((x) => x[p99] <= 3 * x[p50]).length} of ${late.length}`;
    const skipped = `${total((x) => x.skipped)} sends skipped`;
    const sorted = (f) => late.map(f).sort((a, b) => a - b);
    const median = (v) => v[Math.floor(v.length / 2)];
    if (late.length && !late.some((x) => x.shown > 0)) { // the relay paused: only the send's acknowledged commit
      const acks = sorted((x) => x.ackP99);
      L.push(`\nAfter the first 5 minutes: the send's ack p99 ${ms(acks[0])}-${ms(acks[acks.length - 1])} (median ${ms(median(acks))}), ` +
        `p99 <= 3x its p50 in ${within("ackP99", "ackP50")} windows; ${skipped}.`);
    } else if (late.length) {
      const ratios = sorted((x) => x.p99 / x.p50);
      L.push(`\nAfter the first 5 minutes: p99 <= 3x p50 in ${within("p99", "p50")} windows (p99/p50 median ${median(ratios).toFixed(1)}, worst ${ratios[ratios.length - 1].toFixed(1)}); ` +
        `after the commit alone in ${within("afterP99", "afterP50")}; ` +
        `dead tuples at most ${Math.max(...late.map((x) => x.dead ?? 0))}; outbox ${num(Math.min(...late.map((x) => x.bytes)) / 1048576, 1)}-${num(Math.max(...late.map((x) => x.bytes)) / 1048576, 1)} MB; ` +
        `${total((x) => x.sent - x.shown)} of ${total((x) => x.sent)} sent not shown; ${skipped}.`);
    }
  }
  return L.join("\n");
}

async function main() {
  const t0 = Date.now();
  await machineInfo();
  log(`machine: ${results.machine.cpus} cpus, ${results.machine.os}; node ${process.version}, bullmq ${versions.bullmq}, pg ${results.versions.postgres}, redis ${results.versions.redis}`);
  for (const [n, why] of Object.entries(results.unavailable)) log(`${n}: not available: ${why}`);
  const sections = { latency: sectionLatency, throughput: sectionThroughput, raw: sectionRaw, recovery: sectionRecovery, cost: sectionCost, fanout: sectionFanout };
  for (const [name, fn] of Object.entries(sections)) {
    if (!ONLY.includes(name)) continue;
    try { await fn(); } catch (e) { log(`${name}: FAILED: ${e.stack || e.message}`); results[`${name}Error`] = e.message; }
  }
  if (SUSTAINED > 0 && ONLY.includes("sustained")) {
    try { await sectionSustained(SUSTAINED); } catch (e) { log(`sustained: FAILED: ${e.message}`); }
  }
  results.seconds = Math.round((Date.now() - t0) / 1000);
  const text = `# chat_outbox benchmark ${results.date}${QUICK ? " (--quick)" : ""}\n\n` +
    `machine: ${results.machine.cpus} cores (${results.machine.cpuModel}), ${results.machine.memGB} GB, ${results.machine.os}, load at start ${results.machine.load}, data disk ${results.machine.disk}\n` +
    `versions: node ${results.versions.node}, PostgreSQL ${results.versions.postgres}, Redis ${results.versions.redis}, bullmq ${versions.bullmq}, ioredis ${versions.ioredis}, pg ${versions.pg}, socket.io ${versions["socket.io"]}, socket.io-client ${versions["socket.io-client"]}\n\n` +
    report() + `\n\n(run took ${results.seconds} s)\n`;
  fs.writeFileSync(path.join(OUT, "results.md"), text);
  const slim = JSON.parse(JSON.stringify(results, (k, v) => (k === "samples" && Array.isArray(v) && typeof v[0] === "number" ? undefined : v)));
  fs.writeFileSync(path.join(OUT, "results.json"), JSON.stringify(slim, null, 1));
  try {
    plotLatency(OUT, results.latency);
    plotThroughput(OUT, results.throughput, results.raw);
  } catch (e) { log(`plots: ${e.stack}`); }
  console.log(text);
  log(`written: ${OUT}/results.md results.json latency.{dat,png,svg} throughput.{dat,png,svg}`);
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
