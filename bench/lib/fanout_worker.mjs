// The fan-out benchmark's receiving sockets, in a worker thread (see fanout() in drivers.mjs).
//
// They speak Engine.IO v4 / Socket.IO v5 over a plain `ws` WebSocket (the websocket transport, as
// the other sections' socket.io-client does): open packet -> namespace CONNECT (with the variant's
// auth, query on the URL) -> answer pings -> spot the broadcast by its unique body in the raw frame.
// socket.io-client decodes every copy (packet parse, JSON.parse, emitter): about 25-30 us per
// message, which for 10,000 sockets on one thread is more than either server needs to send them,
// so the figure measured the receiver. Both variants are received by this same code.
// Times are epoch milliseconds (timeOrigin + now()), comparable across threads.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import { performance } from "node:perf_hooks";

const require = createRequire(new URL("../baseline/package.json", import.meta.url));
const WebSocket = require("ws");

const epochNow = () => performance.timeOrigin + performance.now();
const { uri, opts, count, batch } = workerData;
const url = (() => {
  const u = new URL(uri.replace(/^http/, "ws"));
  u.pathname = (opts.path || "/socket.io").replace(/\/?$/, "/");
  for (const [k, v] of Object.entries(opts.query || {})) u.searchParams.set(k, String(v));
  u.searchParams.set("EIO", "4");
  u.searchParams.set("transport", "websocket");
  return u.toString();
})();
const connectPacket = "40" + (opts.auth ? JSON.stringify(opts.auth) : "");
const socks = [];
let onFrame = null; // (ws, Buffer) during a watch

function connectOne() {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { ws.terminate(); reject(new Error("socket connect timeout")); }, 20000);
    ws.on("error", (e) => { clearTimeout(t); reject(e); });
    ws.on("message", (data) => {
      const c0 = data[0], c1 = data[1];
      if (c0 === 0x32 && data.length === 1) return ws.send("3"); // ping -> pong
      if (c0 === 0x34 && c1 === 0x32) return onFrame?.(ws, data); // 42: an event
      if (c0 === 0x30) return ws.send(connectPacket); // open packet
      if (c0 === 0x34 && c1 === 0x30) { clearTimeout(t); resolve(ws); } // CONNECT accepted
      else if (c0 === 0x34 && c1 === 0x34) { clearTimeout(t); ws.terminate(); reject(new Error(`connect_error ${data}`)); }
    });
  });
}

parentPort.on("message", async (msg) => {
  try {
    if (msg.cmd === "connect") {
      for (let i = 0; i < count; i += batch)
        socks.push(...await Promise.all(Array.from({ length: Math.min(batch, count - i) }, connectOne)));
      parentPort.postMessage({ connected: socks.length });
    } else if (msg.cmd === "watch") {
      const needle = Buffer.from(JSON.stringify(msg.body));
      const seen = new Set();
      const arrivals = [];
      let t = null;
      const finish = () => { clearTimeout(t); onFrame = null; parentPort.postMessage({ arrivals }); };
      t = setTimeout(finish, msg.timeoutMs);
      onFrame = (ws, data) => {
        if (seen.has(ws) || !data.includes(needle)) return;
        seen.add(ws);
        arrivals.push(epochNow());
        if (arrivals.length === socks.length) finish();
      };
      parentPort.postMessage({ watching: true });
    } else if (msg.cmd === "close") {
      for (const ws of socks) ws.close();
      parentPort.postMessage({ closed: true });
    }
  } catch (e) {
    parentPort.postMessage({ error: e.message });
  }
});
