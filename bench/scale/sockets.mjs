// bench/scale/sockets.mjs - sockets spread over several gateways of one service: connect them all, send one
// message to their room, and time the send -> each socket (docs/journal/scale.md, "Sockets across three gateways").
//
//   node bench/scale/sockets.mjs <per gateway> <port> [<port>...]     (env PGURL, CHAT_OUTBOXD_JWT_SECRET)
//
// Each gateway's sockets live in a child process of their own, so each process stays under its open-file limit;
// inside it they are bench/lib/fanout_worker.mjs's lean Engine.IO/Socket.IO clients over WebSocket, the fan-out
// benchmark's client (docs/gateway.md, "Performance"). Arrival times are epoch milliseconds, comparable across
// the processes. Prints the connect time and, per send, how many sockets got the message and when.
import { fork } from "node:child_process";
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import os from "node:os";
import fs from "node:fs";

const require = createRequire(new URL("../../tests/package.json", import.meta.url));
const CHAT = 424242, REPEATS = 3, BATCH = 250;
const epochNow = () => performance.timeOrigin + performance.now();

if (process.argv[2] === "--child") {
  // one gateway's sockets: worker threads running fanout_worker.mjs, driven over IPC by the parent
  const { uri, opts, count } = JSON.parse(process.argv[3]);
  const threads = Math.max(1, Math.min(4, os.cpus().length));
  const workers = Array.from({ length: threads }, (_, i) => new Worker(new URL("../lib/fanout_worker.mjs", import.meta.url), {
    workerData: { uri, opts, count: Math.floor(count / threads) + (i < count % threads ? 1 : 0), batch: Math.ceil(BATCH / threads) },
  }));
  const ask = (w, msg, key) => new Promise((resolve, reject) => {
    const on = (m) => { if (m.error) { w.off("message", on); reject(new Error(m.error)); } else if (key in m) { w.off("message", on); resolve(m[key]); } };
    w.on("message", on);
    w.postMessage(msg);
  });
  process.on("message", async (msg) => {
    try {
      if (msg.cmd === "connect") {
        const n = await Promise.all(workers.map((w) => ask(w, msg, "connected")));
        process.send({ connected: n.reduce((a, b) => a + b, 0) });
      } else if (msg.cmd === "watch") {
        const arrivals = workers.map((w) => new Promise((resolve) => {
          const on = (m) => { if (m.arrivals) { w.off("message", on); resolve(m.arrivals); } };
          w.on("message", on);
        }));
        await Promise.all(workers.map((w) => ask(w, msg, "watching")));
        process.send({ watching: true });
        process.send({ arrivals: (await Promise.all(arrivals)).flat() });
      } else if (msg.cmd === "close") {
        await Promise.all(workers.map((w) => ask(w, msg, "closed")));
        await Promise.all(workers.map((w) => w.terminate()));
        process.send({ closed: true });
        process.exit(0);
      }
    } catch (e) {
      process.send({ error: e.message });
    }
  });
} else {
  const jwt = require("jsonwebtoken");
  const pg = require("pg");
  const per = Number(process.argv[2]);
  const ports = process.argv.slice(3);
  const token = jwt.sign({ sub: "bench", chats: [CHAT], exp: Math.floor(Date.now() / 1000) + 3600 }, process.env.CHAT_OUTBOXD_JWT_SECRET, { algorithm: "HS256" });
  const opts = { path: "/socket.io", auth: { token } };
  const kids = ports.map((port) => fork(new URL(import.meta.url).pathname, ["--child", JSON.stringify({ uri: `http://127.0.0.1:${port}`, opts, count: per })]));
  const ask = (k, msg, key) => new Promise((resolve, reject) => {
    const on = (m) => { if (m.error) { k.off("message", on); reject(new Error(m.error)); } else if (key in m) { k.off("message", on); resolve(m[key]); } };
    k.on("message", on);
    k.send(msg);
  });
  const t0 = performance.now();
  const connected = await Promise.all(kids.map((k) => ask(k, { cmd: "connect" }, "connected")));
  console.log(`connected ${connected.join(" + ")} = ${connected.reduce((a, b) => a + b, 0)} sockets over ${ports.length} gateway(s) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (const [i, pid] of (process.env.GW_PIDS || "").split(" ").filter(Boolean).entries()) {
    const rss = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)[1];
    console.log(`gateway ${i + 1} (pid ${pid}): RSS ${rss} kB with its sockets connected`);
  }
  const client = new pg.Client({ connectionString: process.env.PGURL });
  await client.connect();
  await new Promise((r) => setTimeout(r, 1000));
  for (let r = 0; r < REPEATS; r++) {
    const body = `fan-${process.pid}-${r}-${Date.now()}`;
    const results = kids.map((k) => new Promise((resolve) => {
      const on = (m) => { if (m.arrivals) { k.off("message", on); resolve(m.arrivals); } };
      k.on("message", on);
    }));
    await Promise.all(kids.map((k) => ask(k, { cmd: "watch", body, timeoutMs: 60000 }, "watching")));
    const sent = epochNow();
    await client.query("SELECT consumers.send_message($1, $2)", [CHAT, body]);
    const per_gw = (await Promise.all(results)).map((a) => a.map((t) => t - sent).sort((x, y) => x - y));
    const all = per_gw.flat().sort((x, y) => x - y);
    const q = (a, f) => a.length ? a[Math.min(a.length - 1, Math.floor(f * a.length))].toFixed(0) : "-";
    console.log(`send ${r + 1}: received ${per_gw.map((a) => a.length).join(" + ")} = ${all.length}; send -> socket median ${q(all, 0.5)} ms, last ${q(all, 1)} ms; last per gateway ${per_gw.map((a) => q(a, 1)).join(", ")} ms`);
    await new Promise((res) => setTimeout(res, 500));
  }
  await client.end();
  await Promise.all(kids.map((k) => ask(k, { cmd: "close" }, "closed").catch(() => {})));
}
