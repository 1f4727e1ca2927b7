// The write-up's relay (version 2) with PgQ as its outbox: the peer the benchmark sets beside ours as
// the best-known bloat-free queue in PostgreSQL (Debian's postgresql-15-pgq3).
//   node relay_pgq.mjs
// The sender (consumers.mjs --version pgq) inserts the message and pgq.insert_event() in one transaction
// and NOTIFYs consumers_outbox. This process is PgQ's ticker, its maintenance and its one consumer:
//   - on a notification (or every second): pgq.ticker(queue) closes a tick; then, while a batch is
//     ready, pgq.next_batch -> pgq.get_batch_events -> queue.addBulk with jobId = message id ->
//     pgq.finish_batch, one transaction per batch (a failed addBulk rolls back: the batch comes again);
//   - every 2 s: pgq.maint_operations(), which rotates the event tables (the queue's
//     queue_rotation_period, set by bench/lib/pg.sh) and TRUNCATEs one when every consumer is past it.
// Events are written once and never updated or deleted: a batch is the events between two ticks'
// snapshots, and the consumer's position is its last finished tick.
import pg from "pg";
import { Queue } from "bullmq";
import { redisConnection, DATABASE_URL, QUEUE } from "./common.mjs";

export const PGQ_QUEUE = "consumers_outbox";
export const PGQ_CONSUMER = "relay";

const pool = new pg.Pool({ connectionString: DATABASE_URL() });
pool.on("error", (e) => console.error("relay_pgq: pool:", e.message));
const queue = new Queue(QUEUE(), { connection: { ...redisConnection(), enableOfflineQueue: false } });
queue.on("error", () => {});

let relayed = 0;

// One batch: returns the number of events, or -1 when no batch is ready.
async function relayBatch() {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows: [{ batch }] } = await client.query("SELECT pgq.next_batch($1, $2) AS batch", [PGQ_QUEUE, PGQ_CONSUMER]);
    if (batch === null) { await client.query("COMMIT"); return -1; }
    const { rows } = await client.query("SELECT ev_id, ev_type, ev_data FROM pgq.get_batch_events($1) ORDER BY ev_id", [batch]);
    if (rows.length > 0) {
      await queue.addBulk(rows.map((r) => {
        const data = JSON.parse(r.ev_data);
        return { name: r.ev_type, data, opts: { jobId: data.id } };
      }));
    }
    await client.query("SELECT pgq.finish_batch($1)", [batch]);
    await client.query("COMMIT");
    relayed += rows.length;
    return rows.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function maintain() {
  const { rows } = await pool.query("SELECT func_name, func_arg FROM pgq.maint_operations()");
  for (const r of rows) {
    // func_name is one of PgQ's own maintenance functions, named by pgq.maint_operations() itself
    if (r.func_arg === null) await pool.query(`SELECT ${r.func_name}()`);
    else await pool.query(`SELECT ${r.func_name}($1)`, [r.func_arg]);
  }
}

async function run() {
  let wake = () => {};
  const listener = new pg.Client({ connectionString: DATABASE_URL() });
  await listener.connect();
  await listener.query("LISTEN consumers_outbox");
  listener.on("notification", () => wake());
  let lastMaint = 0, lastError = "";
  console.log("ready");
  for (;;) {
    try {
      await pool.query("SELECT pgq.ticker($1)", [PGQ_QUEUE]);
      while ((await relayBatch()) >= 0);
      if (Date.now() - lastMaint > 2000) { await maintain(); lastMaint = Date.now(); }
      lastError = "";
    } catch (error) {
      if (error.message !== lastError) console.error("relay_pgq:", error.message);
      lastError = error.message;
    }
    await new Promise((resolve) => { wake = resolve; setTimeout(resolve, 1000); });
  }
}

process.on("SIGTERM", () => { console.error(`relay_pgq: relayed ${relayed}`); process.exit(0); });
run().catch((e) => { console.error("relay_pgq: fatal:", e); process.exit(1); });
