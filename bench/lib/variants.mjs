// The variants the runner measures, behind one interface:
//   available / why, start(), stop(), reset(), sender(poolSize) -> { send(chat, body), close() },
//   socket(chats, opts) -> socket.io-client socket (connected by the caller), pids(), backlog()
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { fileURLToPath } from "node:url";
import { pg, IORedis, io } from "./deps.mjs";
import { start, freePort } from "./proc.mjs";
import { sleep } from "./stats.mjs";
import { createConsumers } from "../baseline/consumers.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "../..");
const BASE = path.join(ROOT, "bench/baseline");
export const BASELINE_QUEUE = "baseline-chat-messages";
export const OURS_QUEUE = "chat-messages";
const env = () => ({
  BASELINE_URL: process.env.BASELINE_URL, PGURL: process.env.PGURL, REDIS_URL: process.env.REDIS_URL,
});

async function delQueue(redisUrl, queue) {
  const r = new IORedis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [c, keys] = await r.scan(cursor, "MATCH", `bull:${queue}:*`, "COUNT", 1000);
      cursor = c;
      if (keys.length) await r.unlink(...keys);
    } while (cursor !== "0");
  } finally { r.disconnect(); }
}

export async function sql(url, text, params) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return await c.query(text, params); } finally { await c.end(); }
}

function socketOpts(extra) {
  return { transports: ["websocket"], forceNew: true, reconnectionDelay: 100, reconnectionDelayMax: 1000, timeout: 20000, ...extra };
}

// ---- baseline: the write-up's Node.js design -------------------------------------------------
// version "pgq": v2 with PgQ as its outbox (relay_pgq.mjs), when bench/lib/pg.sh could create the
// pgq extension (PGQ_EXT=1).
export function baseline(version, { polling = false } = {}) {
  const name = version === "v1" ? "v1" : version === "pgq" ? "pgq" : polling ? "v2 polling" : "v2";
  let workers = null, relay = null, port = 0;
  const e = env();
  const why = version === "pgq" && process.env.PGQ_EXT !== "1" ? `pgq unavailable (${(process.env.PGQ_EXT_ERROR || "").split("\n")[0].slice(0, 80)})` : "";
  const penv = () => ({ DATABASE_URL: e.BASELINE_URL, REDIS_URL: e.REDIS_URL, QUEUE: BASELINE_QUEUE });
  return {
    name, kind: "baseline", version, available: !why, why,
    async start() {
      port = await freePort();
      const tag = name.replace(" ", "-");
      workers = await start(`baseline-workers-${tag}`, process.execPath, [path.join(BASE, "workers.mjs"), "--port", String(port), "--version", version === "v1" ? "v1" : "v2"], { env: penv() });
      if (version === "v2") relay = await start(`baseline-relay-${tag}`, process.execPath, [path.join(BASE, "relay.mjs"), ...(polling ? ["--polling-only"] : [])], { env: penv() });
      if (version === "pgq") relay = await start(`baseline-relay-${tag}`, process.execPath, [path.join(BASE, "relay_pgq.mjs")], { env: penv() });
    },
    async stop() {
      await relay?.stopP(); await workers?.stopP(); relay = workers = null;
    },
    async reset() {
      await sql(e.BASELINE_URL, "TRUNCATE consumers.messages, consumers.outbox, workers.inbox");
      // a new consumer position starts at the next tick: events of an earlier run are never relayed
      if (version === "pgq") {
        await sql(e.BASELINE_URL, "SELECT pgq.unregister_consumer('consumers_outbox', 'relay')");
        await sql(e.BASELINE_URL, "SELECT pgq.ticker('consumers_outbox')");
        await sql(e.BASELINE_URL, "SELECT pgq.register_consumer('consumers_outbox', 'relay')");
      }
      await delQueue(e.REDIS_URL, BASELINE_QUEUE);
    },
    sender(poolSize = 10) {
      const c = createConsumers({ version, databaseUrl: e.BASELINE_URL, redisUrl: e.REDIS_URL, queue: BASELINE_QUEUE, poolSize });
      return { send: (chat, body) => c.sendMessage(chat, body), close: () => c.close() };
    },
    socket(chats, extra = {}) {
      return io(`http://127.0.0.1:${port}`, socketOpts({ query: { chat: chats.join(",") }, ...extra }));
    },
    pids() { return { relay: relay?.pid, workers: workers?.pid }; },
    processNames: version === "v2" ? ["relay.mjs", "workers.mjs"] : version === "pgq" ? ["relay_pgq.mjs", "workers.mjs"] : ["workers.mjs"],
    async unsent() {
      if (version === "pgq") return Number((await sql(e.BASELINE_URL, "SELECT coalesce(sum(pending_events), 0) AS n FROM pgq.get_consumer_info('consumers_outbox', 'relay')")).rows[0].n);
      if (version !== "v2") return NaN;
      return Number((await sql(e.BASELINE_URL, "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")).rows[0].count);
    },
    outboxStats: () => (version === "pgq" ? pgqOutboxStats(e.BASELINE_URL) : outboxStats(e.BASELINE_URL)),
    consumersProcess(args) { // the Consumers service as its own process (v1 deploy test)
      return start(`baseline-consumers-${version}`, process.execPath, [path.join(BASE, "consumers.mjs"), "--version", version, ...args], { env: penv() });
    },
    countSaved: async (prefix) => Number((await sql(e.BASELINE_URL, "SELECT count(*) FROM consumers.messages WHERE body LIKE $1", [`${prefix}%`])).rows[0].count),
  };
}

// the outbox's table (v1, v2, chat_outbox 1.1) or chat_outbox 1.2's generations (consumers.outbox_events_<0..2>)
async function outboxStats(url) {
  const r = await sql(url, `SELECT sum(pg_total_relation_size(relid)) AS bytes, sum(n_dead_tup) AS dead, sum(n_live_tup) AS live
                             FROM pg_stat_user_tables WHERE schemaname = 'consumers' AND (relname = 'outbox' OR relname LIKE 'outbox\\_events\\_%')`);
  return r.rows[0] && r.rows[0].bytes !== null ? { bytes: Number(r.rows[0].bytes), dead: Number(r.rows[0].dead), live: Number(r.rows[0].live) } : null;
}

// PgQ's outbox is its rotating event tables (pgq.event_<queue id>_<0..2>)
async function pgqOutboxStats(url) {
  const r = await sql(url, `SELECT coalesce(sum(pg_total_relation_size(relid)), 0) AS bytes, coalesce(sum(n_dead_tup), 0) AS dead,
                                   coalesce(sum(n_live_tup), 0) AS live
                             FROM pg_stat_user_tables WHERE schemaname = 'pgq' AND relname LIKE 'event\\_%'`);
  return { bytes: Number(r.rows[0].bytes), dead: Number(r.rows[0].dead), live: Number(r.rows[0].live) };
}

// ---- ours: the chat_outbox extension's relay + chat-outboxd ------------------------------------
export const JWT_SECRET = "bench-secret-" + crypto.randomBytes(16).toString("hex"); // 45 bytes: the daemon wants 32 or more
const b64u = (b) => Buffer.from(b).toString("base64url");
export function jwt(claims, secret = JWT_SECRET) {
  const h = b64u(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const p = b64u(JSON.stringify(claims));
  const s = crypto.createHmac("sha256", secret).update(`${h}.${p}`).digest("base64url");
  return `${h}.${p}.${s}`;
}

export const DAEMON = process.env.CHAT_OUTBOXD || path.join(ROOT, "build/daemon/chat-outboxd");

export function ours({ polling = false } = {}) {
  const name = polling ? "ours polling" : "ours";
  const e = env();
  let why = "";
  if (process.env.OURS_EXT !== "1") why = `extension unavailable (${(process.env.OURS_EXT_ERROR || "").split("\n")[0].slice(0, 80)})`;
  else if (!fs.existsSync(DAEMON)) why = `${path.relative(ROOT, DAEMON)} missing`;
  let daemon = null, port = 0;
  return {
    name, kind: "ours", available: !why, why,
    async start() {
      await sql(e.PGURL, `ALTER SYSTEM SET chat_outbox.wake_at_commit = ${polling ? "off" : "on"}`);
      await sql(e.PGURL, "SELECT pg_reload_conf()");
      await sleep(200);
      port = await freePort();
      daemon = await start(`ours-daemon${polling ? "-polling" : ""}`, DAEMON, [
        "--service", "workers", "--queue", OURS_QUEUE, "--listen", `127.0.0.1:${port}`,
        "--database-url", e.PGURL, "--redis-url", e.REDIS_URL, "--jwt-secret", JWT_SECRET,
      ], { ready: { url: `http://127.0.0.1:${port}/healthz` } }); // 200 once it admits clients
    },
    async stop() {
      await daemon?.stopP(); daemon = null;
      if (polling) { await sql(e.PGURL, "ALTER SYSTEM RESET chat_outbox.wake_at_commit"); await sql(e.PGURL, "SELECT pg_reload_conf()"); }
    },
    async reset() {
      // chat_outbox 1.2's outbox is its generations (consumers.outbox is a view over them); 1.1's is a table
      const gens = (await sql(e.PGURL, "SELECT to_regclass('consumers.outbox_events') IS NOT NULL AS gens")).rows[0].gens;
      await sql(e.PGURL, gens ? "TRUNCATE consumers.messages, consumers.outbox_events, consumers.outbox_refused, workers.inbox"
                              : "TRUNCATE consumers.messages, consumers.outbox, workers.inbox");
      await delQueue(e.REDIS_URL, OURS_QUEUE);
    },
    sender(poolSize = 10) {
      const pool = new pg.Pool({ connectionString: e.PGURL, max: poolSize });
      pool.on("error", () => {});
      return {
        send: async (chat, body) => (await pool.query("SELECT * FROM consumers.send_message($1, $2)", [chat, body])).rows[0],
        close: () => pool.end(),
      };
    },
    socket(chats, extra = {}) {
      const token = jwt({ sub: "bench", chats, exp: Math.floor(Date.now() / 1000) + 24 * 3600 });
      return io(`http://127.0.0.1:${port}`, socketOpts({ auth: { token }, ...extra }));
    },
    async pids() {
      const r = await sql(e.PGURL, "SELECT pid FROM pg_stat_activity WHERE backend_type ILIKE '%chat_outbox%' OR application_name ILIKE '%chat_outbox%' ORDER BY pid LIMIT 1");
      const ib = await sql(e.PGURL, "SELECT pid FROM pg_stat_activity WHERE application_name = 'chat-outboxd workers inbox'");
      return { relay: r.rows[0]?.pid, daemon: daemon?.pid, "inbox backend": ib.rows[0]?.pid };
    },
    async unsent() {
      return Number((await sql(e.PGURL, "SELECT count(*) FROM consumers.outbox WHERE sent_at IS NULL")).rows[0].count);
    },
    outboxStats: () => outboxStats(e.PGURL),
  };
}

export function allVariants() {
  return [baseline("v1"), baseline("v2"), baseline("v2", { polling: true }), baseline("pgq"), ours(), ours({ polling: true })];
}
