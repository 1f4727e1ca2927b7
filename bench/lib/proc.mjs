// Child processes (by pid), readiness, and /proc sampling for the cost figures.
import { spawn, execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { sleep } from "./stats.mjs";

const LOG_DIR = process.env.BENCH_LOG_DIR || "/tmp";
const children = new Set();

// start(name, cmd, args, {env, ready: "line" | {port} | {url}}) -> ChildProcess with .stopP()
//   ready: a line on stdout, a port that accepts connections, or a URL that answers 200
export async function start(name, cmd, args, { env = {}, ready = "ready", timeoutMs = 30000 } = {}) {
  const log = fs.createWriteStream(`${LOG_DIR}/${name}.log`, { flags: "a" });
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  child.stdout.pipe(log); child.stderr.pipe(log);
  let exited = null;
  child.on("exit", (code, sig) => { exited = { code, sig }; children.delete(child); });
  const deadline = Date.now() + timeoutMs;
  if (typeof ready === "string") {
    await new Promise((resolve, reject) => {
      let buf = "";
      const t = setTimeout(() => reject(new Error(`${name}: not ready in ${timeoutMs} ms (log ${LOG_DIR}/${name}.log)`)), timeoutMs);
      child.stdout.on("data", (d) => { buf += d; if (buf.split("\n").some((l) => l.trim() === ready)) { clearTimeout(t); resolve(); } });
      child.on("exit", () => { clearTimeout(t); reject(new Error(`${name}: exited before ready (log ${LOG_DIR}/${name}.log)`)); });
    });
  } else if (ready && (ready.port || ready.url)) {
    const what = ready.port ? `listening on ${ready.port}` : `answering 200 at ${ready.url}`;
    const up = ready.port ? () => canConnect(ready.port) : async () => (await fetch(ready.url).catch(() => null))?.ok === true;
    for (;;) {
      if (exited) throw new Error(`${name}: exited (${JSON.stringify(exited)}) before ${what} (log ${LOG_DIR}/${name}.log)`);
      if (await up()) break;
      if (Date.now() > deadline) throw new Error(`${name}: not ${what} in ${timeoutMs} ms`);
      await sleep(50);
    }
  }
  child.stopP = async (signal = "SIGTERM") => {
    if (exited) return;
    const done = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    const t = setTimeout(() => { try { child.kill("SIGKILL"); } catch {} }, 5000);
    await done; clearTimeout(t);
  };
  return child;
}

export function killAll() { for (const c of children) { try { c.kill("SIGKILL"); } catch {} } }
process.on("exit", killAll);

export function canConnect(port, host = "127.0.0.1") {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.once("connect", () => { s.destroy(); resolve(true); });
    s.once("error", () => resolve(false));
  });
}

export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 64 << 20, ...opts }, (err, stdout, stderr) => {
      if (err) { err.stdout = stdout; err.stderr = stderr; reject(err); } else resolve({ stdout, stderr });
    });
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer(); s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// statFields: /proc/<pid>/stat after the command name (which may hold spaces and parentheses), so
// f[0] is field 3 (state), f[1] field 4 (ppid), f[11]-f[14] fields 14-17 (utime, stime, cutime, cstime).
export function statFields(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

// CPU seconds (utime+stime) from /proc/<pid>/stat, RSS and peak RSS (kB) from /proc/<pid>/status.
const TCK = 100;
export function procSample(pid) {
  try {
    const f = statFields(pid);
    const cpu = (Number(f[11]) + Number(f[12])) / TCK; // fields 14,15 (utime, stime)
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k) => Number((status.match(new RegExp(`^${k}:\\s+(\\d+)`, "m")) || [0, NaN])[1]);
    return { cpu, rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch { return null; }
}

// CPU seconds of a whole process tree that reaps its children, as the postmaster does: its own
// time, its reaped children's (cutime, cstime) and its live children's. Backends that come and go
// during a run (the senders' connections) are counted, which no per-pid sample could do.
export function treeCpu(rootPid) {
  try {
    const r = statFields(rootPid);
    let cpu = (Number(r[11]) + Number(r[12]) + Number(r[13]) + Number(r[14])) / TCK; // fields 14-17
    for (const d of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const f = statFields(d);
        if (Number(f[1]) === rootPid) cpu += (Number(f[11]) + Number(f[12])) / TCK; // field 4: ppid
      } catch { /* exited meanwhile */ }
    }
    return cpu;
  } catch { return NaN; }
}

// Cost sampler: call begin() before and end() after a run; peak RSS sampled every 200 ms.
export function costSampler(pids, trees = {}) {
  const st = new Map();
  const treeStart = Object.fromEntries(Object.entries(trees).map(([name, pid]) => [name, treeCpu(pid)]));
  for (const [name, pid] of Object.entries(pids)) if (pid) st.set(name, { pid, start: procSample(pid), peak: 0 });
  const tick = () => { for (const s of st.values()) { const x = procSample(s.pid); if (x) { s.peak = Math.max(s.peak, x.rss); s.last = x; } } };
  tick();
  const iv = setInterval(tick, 200);
  return {
    end() {
      clearInterval(iv); tick();
      const out = {};
      for (const [name, s] of st) out[name] = { pid: s.pid, cpuSeconds: s.last && s.start ? s.last.cpu - s.start.cpu : NaN, peakRssMB: s.peak / 1024, hwmMB: s.last ? s.last.hwm / 1024 : NaN };
      for (const [name, pid] of Object.entries(trees)) out[name] = { pid, cpuSeconds: treeCpu(pid) - treeStart[name], peakRssMB: NaN, hwmMB: NaN };
      return out;
    },
  };
}
