// Workers service of the write-up: a BullMQ Worker on the queue and a socket.io server.
//   node workers.mjs --port P [--version v1|v2]
//   v1: the Worker emits job.data to room chat:<chat_id>, event "message" (no inbox; version 1).
//   v2: the Worker inserts into workers.inbox ON CONFLICT (message_id) DO NOTHING and emits only when
//       a row was inserted (duplicates are dropped by id).
// Worker options as in the write-up: connection { host, port, maxRetriesPerRequest: null }, BullMQ
// defaults otherwise (concurrency 1, lockDuration 30 s, completed jobs kept).
// Clients join rooms with the handshake query ?chat=1,2,3 or by emitting "join" with a chat id
// (the write-up does not show how sockets join their chat room; both are the usual socket.io ways).
import http from "node:http";
import pg from "pg";
import { Worker } from "bullmq";
import { Server } from "socket.io";
import { redisConnection, DATABASE_URL, QUEUE, arg } from "./common.mjs";

const version = arg("version", "v2");
const port = Number(arg("port", 3000));

const pool = new pg.Pool({ connectionString: DATABASE_URL() });
pool.on("error", (e) => console.error("workers: pool:", e.message));

const server = http.createServer();
const io = new Server(server, { cors: { origin: "*" } });
io.on("connection", (socket) => {
  const q = socket.handshake.query.chat;
  if (q) for (const id of String(q).split(",")) if (id) socket.join(`chat:${id}`);
  socket.on("join", (chatId, ack) => { socket.join(`chat:${chatId}`); if (typeof ack === "function") ack(true); });
});

let shown = 0, duplicates = 0;
const connection = { ...redisConnection(), maxRetriesPerRequest: null };

const processor = version === "v1"
  ? async (job) => { io.to(`chat:${job.data.chat_id}`).emit("message", job.data); shown++; }
  : async (job) => {
      const message = job.data;
      const { rowCount } = await pool.query(
        `INSERT INTO workers.inbox (message_id, chat_id, body) VALUES ($1, $2, $3)
         ON CONFLICT (message_id) DO NOTHING`,
        [message.id, message.chat_id, message.body],
      );
      if (rowCount === 1) { io.to(`chat:${message.chat_id}`).emit("message", message); shown++; }
      else duplicates++; // a duplicate: already shown
    };

const worker = new Worker(QUEUE(), processor, { connection });
worker.on("error", (e) => console.error("workers: worker:", e.message));

server.listen(port, "127.0.0.1", async () => {
  await worker.waitUntilReady();
  console.log("ready");
});
process.on("SIGTERM", () => { console.error(`workers: shown ${shown} duplicates ${duplicates}`); process.exit(0); });
