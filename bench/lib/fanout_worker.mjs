// A share of the fan-out benchmark's receiving sockets, in a worker thread (see fanout() in
// drivers.mjs). One Node thread holding 10,000 socket.io clients spends more CPU decoding one
// broadcast than the server spends sending it; spreading them over threads keeps the figure about
// the server. Times are epoch milliseconds (timeOrigin + now()), comparable across threads.
import { parentPort, workerData } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { io } from "./deps.mjs";

const epochNow = () => performance.timeOrigin + performance.now();
const { uri, opts, count, batch } = workerData;
const socks = [];

function connectOne() {
  const s = io(uri, { ...opts, forceNew: true, reconnection: false });
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { s.close(); reject(new Error("socket connect timeout")); }, 20000);
    s.once("connect", () => { clearTimeout(t); resolve(s); });
    s.on("connect_error", (e) => { if (!s.active) { clearTimeout(t); reject(e); } });
  });
}

parentPort.on("message", async (msg) => {
  try {
    if (msg.cmd === "connect") {
      for (let i = 0; i < count; i += batch)
        socks.push(...await Promise.all(Array.from({ length: Math.min(batch, count - i) }, connectOne)));
      parentPort.postMessage({ connected: socks.length });
    } else if (msg.cmd === "watch") {
      const arrivals = [];
      let t = null;
      const finish = () => {
        clearTimeout(t);
        for (const s of socks) s.removeAllListeners("message");
        parentPort.postMessage({ arrivals });
      };
      t = setTimeout(finish, msg.timeoutMs);
      for (const s of socks) s.on("message", (m) => {
        if (m?.body !== msg.body) return;
        arrivals.push(epochNow());
        if (arrivals.length === socks.length) finish();
      });
      parentPort.postMessage({ watching: true });
    } else if (msg.cmd === "close") {
      for (const s of socks) s.close();
      parentPort.postMessage({ closed: true });
    }
  } catch (e) {
    parentPort.postMessage({ error: e.message });
  }
});
