// The measurements. Sender and socket.io-client receivers live in this process: one clock
// (performance.now()); a message is matched by its body, which is unique per send.
import crypto from "node:crypto";
import os from "node:os";
import { Worker } from "node:worker_threads";
import { summary, sleep, now } from "./stats.mjs";
import { costSampler } from "./proc.mjs";

const RUN = crypto.randomBytes(3).toString("hex");
let seq = 0;
const uniq = (tag) => `${tag}-${RUN}-${++seq}`;

export function connect(variant, chats, extra = {}) {
  const s = variant.socket(chats, extra);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { s.close(); reject(new Error(`${variant.name}: socket connect timeout`)); }, 20000);
    s.once("connect", () => { clearTimeout(t); resolve(s); });
    s.on("connect_error", (e) => { if (!s.active) { clearTimeout(t); reject(e); } });
  });
}

// Receiver: body -> arrival time, for all sockets passed.
function receiver(sockets) {
  const got = new Map();
  const waiters = [];
  for (const s of sockets) s.on("message", (m) => {
    const t = now();
    if (m && typeof m.body === "string" && !got.has(m.body)) {
      got.set(m.body, t);
      for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i].check()) waiters.splice(i, 1);
    }
  });
  return {
    got,
    waitFor(pred, timeoutMs) {
      if (pred()) return Promise.resolve(true);
      return new Promise((resolve) => {
        const w = { check: () => { if (pred()) { clearTimeout(w.t); resolve(true); return true; } return false; } };
        w.t = setTimeout(() => { const i = waiters.indexOf(w); if (i >= 0) waiters.splice(i, 1); resolve(pred()); }, timeoutMs);
        waiters.push(w);
      });
    },
  };
}

// Latency: `count` messages, one every `intervalMs`, send -> shown.
export async function latency(variant, { count = 100, intervalMs = 100, chat = 1, drainMs = 5000 } = {}) {
  const sock = await connect(variant, [chat]);
  const rx = receiver([sock]);
  const sender = variant.sender(4);
  const sentAt = new Map();
  const errors = [], acks = [];
  await sleep(200);
  const t0 = now();
  const pending = [];
  for (let i = 0; i < count; i++) {
    const due = t0 + i * intervalMs;
    const wait = due - now();
    if (wait > 0) await sleep(wait);
    const body = uniq(`lat`);
    const t = now();
    sentAt.set(body, t);
    pending.push(sender.send(chat, body).then(() => acks.push(now() - t), (e) => errors.push(e.message)));
  }
  await Promise.all(pending);
  await rx.waitFor(() => [...sentAt.keys()].every((b) => rx.got.has(b)), drainMs);
  const lat = [];
  for (const [b, t] of sentAt) if (rx.got.has(b)) lat.push(rx.got.get(b) - t);
  sock.close(); await sender.close();
  return { ...summary(lat), ack: summary(acks), sent: count, shown: lat.length, errors: errors.length, samples: lat };
}

// The floor under every latency above: one request and its answer, paced like the latency test.
// On an idle VM each hop wakes a halted vCPU, which costs far more than the work itself, so a
// paced round trip is much slower than the same call back to back (see docs/journal/end-to-end.md, "Reading the figures").
export async function pacedRoundTrips(call, { count = 100, intervalMs = 100 } = {}) {
  const rtt = [];
  const t0 = now();
  for (let i = 0; i < count; i++) {
    const wait = t0 + i * intervalMs - now();
    if (wait > 0) await sleep(wait);
    const t = now();
    await call();
    rtt.push(now() - t);
  }
  const back = [];
  for (let i = 0; i < count; i++) { const t = now(); await call(); back.push(now() - t); }
  return { paced: summary(rtt), backToBack: summary(back) };
}

const lastShown = (rx) => { let m = 0; for (const t of rx.got.values()) if (t > m) m = t; return m; };

// Throughput: `senders` concurrent senders for `seconds`, each on its own chat; one receiver
// socket in all those chats. Delivered = shown at the socket within the window.
export async function throughput(variant, { senders, seconds, drainMs = 30000 }) {
  const chats = Array.from({ length: senders }, (_, i) => i + 1);
  const sock = await connect(variant, chats);
  const rx = receiver([sock]);
  const sender = variant.sender(senders);
  const sentAt = new Map();
  let committed = 0, errors = 0;
  await sleep(200);
  const t0 = now(), tEnd = t0 + seconds * 1000;
  const loops = chats.map(async (chat) => {
    while (now() < tEnd) {
      const body = uniq(`tp${senders}`);
      sentAt.set(body, now());
      try { await sender.send(chat, body); committed++; } catch { errors++; await sleep(10); }
    }
  });
  await sleep(Math.max(0, tEnd - now()));
  const deliveredInWindow = rx.got.size;
  const committedAtEnd = committed;
  const backlog = Math.max(0, committedAtEnd - deliveredInWindow);
  await Promise.all(loops);
  const tDrain = now();
  const drained = await rx.waitFor(() => rx.got.size >= committed, drainMs);
  const drainSeconds = (now() - tDrain) / 1000;
  const lat = [];
  for (const [b, t] of sentAt) if (rx.got.has(b)) lat.push(rx.got.get(b) - t);
  sock.close(); await sender.close();
  return {
    // end-to-end rate: everything shown, from the first send to the last message shown (window + drain)
    senders, seconds, committed, errors, sendRate: committedAtEnd / seconds, deliveredInWindowRate: deliveredInWindow / seconds,
    deliveredRate: drained ? rx.got.size / (seconds + (lastShown(rx) - tEnd) / 1000) : deliveredInWindow / seconds,
    backlog, drained, drainSeconds, shownTotal: rx.got.size, ...summary(lat), samples: lat,
  };
}

// Recovery: Redis down, send `count` messages with `senders` senders, Redis up, time until all shown.
// redis: { down(), up() }. Cost sampled over the whole run (send + drain).
// extra: more processes to sample ({ pids, trees }, see costSampler).
export async function recovery(variant, { count, senders = 32, redis, timeoutMs = 600000, extra = {} }) {
  const sock = await connect(variant, [1]);
  const rx = receiver([sock]);
  const sender = variant.sender(senders);
  const pids = { ...(await variant.pids()), ...extra.pids };
  const cost = costSampler(pids, extra.trees);
  if (redis) await redis.down();
  const tSend = now();
  let next = 0, errors = 0;
  const bodies = [];
  await Promise.all(Array.from({ length: senders }, async () => {
    while (next < count) {
      next++;
      const body = uniq("rec");
      try { await sender.send(1, body); bodies.push(body); } catch { errors++; }
    }
  }));
  const sendSeconds = (now() - tSend) / 1000;
  const shownWhileDown = rx.got.size;
  const tUp = now();
  if (redis) await redis.up();
  const all = await rx.waitFor(() => rx.got.size >= bodies.length, timeoutMs);
  const upToAll = (now() - tUp) / 1000;
  const costs = cost.end();
  sock.close(); await sender.close();
  return { count: bodies.length, errors, sendSeconds, shownWhileDown, allShown: all, shown: rx.got.size, upToAllSeconds: upToAll, drainRate: rx.got.size / upToAll, cost: costs };
}

// v1 under the write-up's loss scenario: Consumers as its own process sends, Redis goes down,
// Consumers is redeployed (killed) while Redis is down, Redis comes back: saved vs shown.
export async function v1Outage(variant, { redis, senders = 8, upSeconds = 2, downSeconds = 5, settleMs = 45000 }) {
  const sock = await connect(variant, [1]);
  const rx = receiver([sock]);
  const tag = `v1out-${RUN}`;
  const proc = await variant.consumersProcess(["--senders", String(senders), "--tag", tag]);
  await sleep(upSeconds * 1000);
  await redis.down();
  await sleep(downSeconds * 1000);
  await proc.stopP("SIGTERM"); // deploy: the process is replaced
  await redis.up();
  const saved = await variant.countSaved(tag);
  const shownOf = () => [...rx.got.keys()].filter((b) => b.startsWith(tag)).length;
  // wait past BullMQ's stalled-job recovery (lockDuration 30 s) so that late is not counted as lost
  await rx.waitFor(() => shownOf() >= saved, settleMs);
  const shown = shownOf();
  sock.close();
  return { saved, shown, lost: saved - shown };
}

// Fan-out: `sockets` clients in one room; one message; time from send to the last socket.
// The receivers (fanout_worker.mjs) are the same for every variant: lean Engine.IO/Socket.IO
// WebSocket clients in worker threads that spot the message in the raw frame, because a
// socket.io-client decoding 10,000 copies on one thread needed more CPU than either server needed to
// send them. Worker threads keep the sender's thread free; on 2 cores one is enough, and a second
// would take the server's core away during the burst. The variant's socket options (URL, query,
// auth) are read from an unconnected socket.io-client socket and handed to the workers.
const defaultThreads = Math.max(1, Math.min(4, os.cpus().length - 2));
export async function fanout(variant, { sockets, chat = 424242, repeats = 3, batch = 250, threads = defaultThreads }) {
  const probe = variant.socket([chat], { reconnection: false, autoConnect: false });
  const spec = { uri: probe.io.uri, opts: JSON.parse(JSON.stringify(probe.io.opts)) };
  probe.close();
  delete spec.opts.autoConnect;
  const epochNow = () => performance.timeOrigin + performance.now();
  const workers = Array.from({ length: threads }, (_, i) => {
    const count = Math.floor(sockets / threads) + (i < sockets % threads ? 1 : 0);
    const w = new Worker(new URL("./fanout_worker.mjs", import.meta.url), { workerData: { ...spec, count, batch: Math.ceil(batch / threads) } });
    w.unref();
    return w;
  });
  const ask = (w, msg, key) => new Promise((resolve, reject) => {
    const on = (m) => { if (m.error) { w.off("message", on); reject(new Error(`${variant.name}: ${m.error}`)); } else if (key in m) { w.off("message", on); resolve(m[key]); } };
    w.on("message", on);
    w.postMessage(msg);
  });
  const tConnect = now();
  try {
    await Promise.all(workers.map((w) => ask(w, { cmd: "connect" }, "connected")));
    const connectSeconds = (now() - tConnect) / 1000;
    await sleep(Number(process.env.FANOUT_SETTLE_MS || 500));
    const sender = variant.sender(1);
    const runs = [];
    for (let r = 0; r < repeats; r++) {
      const body = uniq("fan");
      const results = workers.map((w) => new Promise((resolve) => {
        const on = (m) => { if (m.arrivals) { w.off("message", on); resolve(m.arrivals); } };
        w.on("message", on);
      }));
      await Promise.all(workers.map((w) => ask(w, { cmd: "watch", body, timeoutMs: 60000 }, "watching")));
      const t0 = epochNow();
      await sender.send(chat, body);
      const lat = (await Promise.all(results)).flat().map((t) => t - t0);
      const s = summary(lat);
      runs.push({ received: lat.length, first: Math.min(...lat), p50: s.p50, last: s.max });
      await sleep(300);
    }
    await sender.close();
    return { sockets, threads, connectSeconds, runs };
  } finally {
    await Promise.all(workers.map((w) => ask(w, { cmd: "close" }, "closed").catch(() => {})));
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
