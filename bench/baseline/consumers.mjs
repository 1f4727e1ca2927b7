// Consumers service of the write-up: sendMessage, version 1 or version 2.
//
//   v1: INSERT the message, then queue.add("message.created", message) with the Queue's default
//       connection options (ioredis offline queue ENABLED: while Redis is down the add waits in
//       process memory and dies with the process - the write-up's lost messages 7 and 8).
//   v2: one transaction: INSERT the message, INSERT its outbox row (event 'message.created',
//       payload = the message row), NOTIFY consumers_outbox, COMMIT. Touches only Postgres.
//   pgq: v2 with PgQ as the outbox: pgq.insert_event(consumers_outbox, 'message.created', the
//       message row as JSON) instead of the outbox INSERT (relay_pgq.mjs moves the events).
//
// Used two ways:
//   - as a module: createConsumers({ version, databaseUrl, redisUrl, queue, poolSize }) -> { sendMessage, close }
//     (the benchmark's meters import it so that send and show are timed on one clock);
//   - as a process: node consumers.mjs --version v1|v2 --senders N [--chat ID] [--tag T]
//     sends messages in a loop from N concurrent senders until killed (used to "deploy" Consumers
//     during a Redis outage, as in the write-up's loss test). Prints "saved N" lines every second.
import pg from "pg";
import { Queue } from "bullmq";
import { redisConnection, DATABASE_URL, QUEUE, arg } from "./common.mjs";

export function createConsumers({
  version = "v2",
  databaseUrl = DATABASE_URL(),
  redisUrl = process.env.REDIS_URL,
  queue: queueName = QUEUE(),
  poolSize = 10,
} = {}) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on("error", (e) => console.error("consumers: pool:", e.message));
  let queue = null;

  if (version === "v1") {
    queue = new Queue(queueName, { connection: redisConnection(redisUrl) });
    queue.on("error", () => {}); // connection errors are logged by ioredis retries; sendMessage sees the outcome

    async function sendMessage(chatId, body) {
      const { rows: [message] } = await pool.query(
        "INSERT INTO consumers.messages (chat_id, body) VALUES ($1, $2) RETURNING id, chat_id, body",
        [chatId, body],
      );
      await queue.add("message.created", message);
      return message;
    }
    return { sendMessage, pool, close: async () => { await queue.close().catch(() => {}); await pool.end(); } };
  }

  if (version !== "v2" && version !== "pgq") throw new Error(`unknown version ${version}`);
  const outboxInsert = version === "pgq"
    ? "SELECT pgq.insert_event('consumers_outbox', 'message.created', $1::text)"
    : "INSERT INTO consumers.outbox (event, payload) VALUES ('message.created', $1)";

  async function sendMessage(chatId, body) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const { rows: [message] } = await client.query(
        "INSERT INTO consumers.messages (chat_id, body) VALUES ($1, $2) RETURNING id, chat_id, body",
        [chatId, body],
      );
      await client.query(outboxInsert, [JSON.stringify(message)]);
      await client.query("NOTIFY consumers_outbox"); // delivered at COMMIT, dropped at ROLLBACK
      await client.query("COMMIT");
      return message;
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
  }
  return { sendMessage, pool, close: () => pool.end() };
}

// Process mode: a load loop, used for the v1 outage/deploy scenario.
if (import.meta.url === `file://${process.argv[1]}`) {
  const version = arg("version", "v1");
  const senders = Number(arg("senders", 8));
  const chat = Number(arg("chat", 1));
  const tag = arg("tag", "load");
  const c = createConsumers({ version, poolSize: senders });
  let saved = 0, failed = 0, n = 0;
  // count a message as saved as soon as its INSERT committed: v1 wraps pool.query to see that.
  const q = c.pool.query.bind(c.pool);
  c.pool.query = async (...a) => { const r = await q(...a); if (String(a[0]).startsWith("INSERT INTO consumers.messages")) saved++; return r; };
  const loop = async () => {
    for (;;) {
      try { await c.sendMessage(chat, `${tag}-${n++}`); } catch (e) { failed++; await new Promise((r) => setTimeout(r, 50)); }
    }
  };
  setInterval(() => console.log(`saved ${saved} failed ${failed}`), 1000).unref();
  for (let i = 0; i < senders; i++) loop();
  console.log("ready");
}
