// Relay of the write-up (version 2): moves consumers.outbox rows to BullMQ.
//   node relay.mjs [--polling-only]
// One transaction per batch: SELECT unsent ORDER BY id LIMIT 100 FOR UPDATE (plain, not SKIP LOCKED),
// queue.addBulk with jobId = message id, UPDATE sent_at = now(), COMMIT; ROLLBACK on any error.
// The Redis connection has the offline queue disabled. It LISTENs on consumers_outbox and wakes at
// each commit; a 1 s timer is the fallback. --polling-only: no LISTEN, only the 1 s timer.
import pg from "pg";
import { Queue } from "bullmq";
import { redisConnection, DATABASE_URL, QUEUE, arg } from "./common.mjs";

const pollingOnly = Boolean(arg("polling-only", false));
const pool = new pg.Pool({ connectionString: DATABASE_URL() });
pool.on("error", (e) => console.error("relay: pool:", e.message));

// Without the offline queue: while Redis is down, addBulk fails at once and the batch rolls back.
const queue = new Queue(QUEUE(), {
  connection: { ...redisConnection(), enableOfflineQueue: false },
});
queue.on("error", () => {});

let relayed = 0;

async function relayBatch() {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query(
      `SELECT id, event, payload FROM consumers.outbox
        WHERE sent_at IS NULL
        ORDER BY id
        LIMIT 100
        FOR UPDATE`,
    );
    if (rows.length > 0) {
      await queue.addBulk(rows.map((r) => ({ name: r.event, data: r.payload, opts: { jobId: r.payload.id } })));
      await client.query("UPDATE consumers.outbox SET sent_at = now() WHERE id = ANY($1)", [rows.map((r) => r.id)]);
    }
    await client.query("COMMIT");
    relayed += rows.length;
    return rows.length;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

async function runRelay() {
  let wake = () => {};
  if (!pollingOnly) {
    const listener = new pg.Client({ connectionString: DATABASE_URL() });
    await listener.connect();
    await listener.query("LISTEN consumers_outbox");
    listener.on("notification", () => wake());
  }
  console.log("ready");
  let lastError = "";
  for (;;) {
    try {
      while ((await relayBatch()) > 0);
      lastError = "";
    } catch (error) {
      // the rows stay in the outbox; the next pass picks them up
      if (error.message !== lastError) console.error("relay:", error.message);
      lastError = error.message;
    }
    await new Promise((resolve) => {
      wake = resolve;
      setTimeout(resolve, 1000);
    });
  }
}

process.on("SIGTERM", () => { console.error(`relay: relayed ${relayed}`); process.exit(0); });
runRelay().catch((e) => { console.error("relay: fatal:", e); process.exit(1); });
