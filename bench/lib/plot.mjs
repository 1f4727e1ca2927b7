// Plots as PNG without any package: an RGB canvas, lines, a 5x7 bitmap font, and a PNG encoder
// (zlib from node:zlib, CRC-32 here).
import zlib from "node:zlib";

// ---- PNG ----
const CRC = new Int32Array(256).map((_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c; });
function crc32(buf) { let c = -1; for (const b of buf) c = CRC[(c ^ b) & 255] ^ (c >>> 8); return (c ^ -1) >>> 0; }
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
export function encodePNG(w, h, rgb) {
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) { raw[y * (w * 3 + 1)] = 0; rgb.copy(raw, y * (w * 3 + 1) + 1, y * w * 3, (y + 1) * w * 3); }
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2; ihdr[10] = ihdr[11] = ihdr[12] = 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(raw, { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}

// ---- 5x7 font: each glyph is 7 rows of 5 bits (MSB = left) ----
const G = {
  "0": [14, 17, 19, 21, 25, 17, 14], "1": [4, 12, 4, 4, 4, 4, 14], "2": [14, 17, 1, 2, 4, 8, 31], "3": [31, 2, 4, 2, 1, 17, 14],
  "4": [2, 6, 10, 18, 31, 2, 2], "5": [31, 16, 30, 1, 1, 17, 14], "6": [6, 8, 16, 30, 17, 17, 14], "7": [31, 1, 2, 4, 8, 8, 8],
  "8": [14, 17, 17, 14, 17, 17, 14], "9": [14, 17, 17, 15, 1, 2, 12],
  A: [14, 17, 17, 31, 17, 17, 17], B: [30, 17, 17, 30, 17, 17, 30], C: [14, 17, 16, 16, 16, 17, 14], D: [28, 18, 17, 17, 17, 18, 28],
  E: [31, 16, 16, 30, 16, 16, 31], F: [31, 16, 16, 30, 16, 16, 16], G: [14, 17, 16, 23, 17, 17, 15], H: [17, 17, 17, 31, 17, 17, 17],
  I: [14, 4, 4, 4, 4, 4, 14], J: [7, 2, 2, 2, 2, 18, 12], K: [17, 18, 20, 24, 20, 18, 17], L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17], N: [17, 17, 25, 21, 19, 17, 17], O: [14, 17, 17, 17, 17, 17, 14], P: [30, 17, 17, 30, 16, 16, 16],
  Q: [14, 17, 17, 17, 21, 18, 13], R: [30, 17, 17, 30, 20, 18, 17], S: [15, 16, 16, 14, 1, 1, 30], T: [31, 4, 4, 4, 4, 4, 4],
  U: [17, 17, 17, 17, 17, 17, 14], V: [17, 17, 17, 17, 17, 10, 4], W: [17, 17, 17, 21, 21, 21, 10], X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4], Z: [31, 1, 2, 4, 8, 16, 31],
  " ": [0, 0, 0, 0, 0, 0, 0], ".": [0, 0, 0, 0, 0, 12, 12], ",": [0, 0, 0, 0, 12, 4, 8], "-": [0, 0, 0, 31, 0, 0, 0],
  "/": [1, 1, 2, 4, 8, 16, 16], ":": [0, 12, 12, 0, 12, 12, 0], "(": [2, 4, 8, 8, 8, 4, 2], ")": [8, 4, 2, 2, 2, 4, 8],
  "%": [24, 25, 2, 4, 8, 19, 3], "_": [0, 0, 0, 0, 0, 0, 31], "=": [0, 0, 31, 0, 31, 0, 0], ">": [8, 4, 2, 1, 2, 4, 8],
  "<": [2, 4, 8, 16, 8, 4, 2], "+": [0, 4, 4, 31, 4, 4, 0], "X_": [0, 17, 10, 4, 10, 17, 0],
};

class Canvas {
  constructor(w, h) { this.w = w; this.h = h; this.px = Buffer.alloc(w * h * 3, 255); }
  set(x, y, c) { x = Math.round(x); y = Math.round(y); if (x < 0 || y < 0 || x >= this.w || y >= this.h) return; const i = (y * this.w + x) * 3; this.px[i] = c[0]; this.px[i + 1] = c[1]; this.px[i + 2] = c[2]; }
  rect(x, y, w, h, c) { for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) this.set(x + i, y + j, c); }
  line(x0, y0, x1, y1, c, width = 1, dash = 0) {
    const n = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0)));
    for (let k = 0; k <= n; k++) {
      if (dash && Math.floor(k / dash) % 2) continue;
      const x = x0 + ((x1 - x0) * k) / n, y = y0 + ((y1 - y0) * k) / n;
      for (let a = 0; a < width; a++) for (let b = 0; b < width; b++) this.set(x + a - (width >> 1), y + b - (width >> 1), c);
    }
  }
  text(x, y, s, c = [0, 0, 0], scale = 2, align = "left") {
    s = String(s).toUpperCase();
    const w = s.length * 6 * scale;
    if (align === "center") x -= w / 2; else if (align === "right") x -= w;
    for (const ch of s) {
      const g = G[ch] || G[" "];
      for (let r = 0; r < 7; r++) for (let b = 0; b < 5; b++) if (g[r] & (16 >> b)) this.rect(x + b * scale, y + r * scale, scale, scale, c);
      x += 6 * scale;
    }
  }
  textV(x, y, s, c = [0, 0, 0], scale = 2) { // vertical, bottom to top, centered on y
    s = String(s).toUpperCase();
    let yy = y + (s.length * 6 * scale) / 2;
    for (const ch of s) {
      const g = G[ch] || G[" "];
      for (let r = 0; r < 7; r++) for (let b = 0; b < 5; b++) if (g[r] & (16 >> b)) this.rect(x + r * scale, yy - b * scale - scale, scale, scale, c);
      yy -= 6 * scale;
    }
  }
  png() { return encodePNG(this.w, this.h, this.px); }
}

const COLORS = { "v1": [230, 120, 20], "v2": [40, 90, 200], "v2 polling": [120, 160, 230], "ours": [20, 160, 60], "ours polling": [140, 210, 140] };
const colorOf = (n, i) => COLORS[n] || [[200, 40, 40], [120, 40, 160], [90, 90, 90]][i % 3];

// A chart frame with log or linear axes. xs/ys: {min, max, log, ticks:[values], fmt}
function frame(title, xs, ys, xlabel, ylabel, W = 900, H = 560) {
  const c = new Canvas(W, H);
  const L = 90, R = W - 190, T = 50, B = H - 70;
  const tx = (v) => xs.log ? L + ((Math.log10(v) - Math.log10(xs.min)) / (Math.log10(xs.max) - Math.log10(xs.min))) * (R - L) : L + ((v - xs.min) / (xs.max - xs.min)) * (R - L);
  const ty = (v) => ys.log ? B - ((Math.log10(v) - Math.log10(ys.min)) / (Math.log10(ys.max) - Math.log10(ys.min))) * (B - T) : B - ((v - ys.min) / (ys.max - ys.min)) * (B - T);
  c.text(W / 2, 15, title, [0, 0, 0], 2, "center");
  for (const v of xs.ticks) { const x = tx(v); c.line(x, T, x, B, [225, 225, 225]); c.line(x, B, x, B + 5, [0, 0, 0]); c.text(x, B + 10, xs.fmt(v), [0, 0, 0], 2, "center"); }
  for (const v of ys.ticks) { const y = ty(v); c.line(L, y, R, y, [225, 225, 225]); c.line(L - 5, y, L, y, [0, 0, 0]); c.text(L - 8, y - 7, ys.fmt(v), [0, 0, 0], 2, "right"); }
  c.line(L, B, R, B, [0, 0, 0], 2); c.line(L, T, L, B, [0, 0, 0], 2);
  c.text((L + R) / 2, H - 28, xlabel, [0, 0, 0], 2, "center");
  c.textV(6, (T + B) / 2, ylabel, [0, 0, 0], 2);
  let legendY = T;
  const legend = (name, col, dash = 0) => { c.line(R + 15, legendY + 7, R + 45, legendY + 7, col, 3, dash); c.text(R + 52, legendY, name, [0, 0, 0], 2); legendY += 24; };
  return { c, tx, ty, legend, clampX: (v) => Math.min(xs.max, Math.max(xs.min, v)), clampY: (v) => Math.min(ys.max, Math.max(ys.min, v)) };
}

const fmtMs = (v) => (v >= 1000 ? `${v / 1000}s` : v < 1 ? `${v}` : `${v}`);

// Latency distribution: CDF of send -> shown, all runs pooled, per variant (log x).
export function plotLatency(latency) {
  const xs = { min: 0.5, max: 2000, log: true, ticks: [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000], fmt: fmtMs };
  const ys = { min: 0, max: 100, ticks: [0, 25, 50, 75, 90, 100], fmt: (v) => `${v}%` };
  const f = frame("LATENCY SEND -> SHOWN (CDF, 100 MSGS, 1 PER 100 MS, ALL RUNS)", xs, ys, "LATENCY (MS, LOG)", "MESSAGES", 1000);
  Object.entries(latency).forEach(([name, runs], i) => {
    const s = runs.flatMap((r) => r.samples || []).sort((a, b) => a - b);
    if (!s.length) return;
    const col = colorOf(name, i);
    let px = null, py = null;
    s.forEach((v, k) => {
      const x = f.tx(f.clampX(v)), y = f.ty(((k + 1) / s.length) * 100);
      if (px !== null) { f.c.line(px, py, x, py, col, 3); f.c.line(x, py, x, y, col, 3); }
      px = x; py = y;
    });
    f.legend(name, col);
  });
  return f.c.png();
}

// Throughput vs senders (log2 x): delivered end-to-end per variant; raw send rates dashed.
export function plotThroughput(tp, raw = {}) {
  const all = [...Object.values(tp).flatMap((rs) => rs.map((r) => r.deliveredRate)), ...Object.values(raw).flatMap((o) => Object.values(o))].filter((v) => v > 0);
  const top = Math.max(10, ...all);
  const mag = 10 ** Math.floor(Math.log10(top));
  const ymax = Math.ceil(top / mag) * mag;
  const step = ymax / 5;
  const xs = { min: 1, max: 128, log: true, ticks: [1, 2, 4, 8, 16, 32, 64, 128], fmt: (v) => `${v}` };
  const ys = { min: 0, max: ymax, ticks: Array.from({ length: 6 }, (_, i) => i * step), fmt: (v) => (v >= 1000 ? `${+(v / 1000).toFixed(1)}K` : `${Math.round(v)}`) };
  const f = frame("THROUGHPUT VS CONCURRENT SENDERS", xs, ys, "SENDERS (LOG)", "MESSAGES/S", 1000);
  const series = (pts, col, dash) => {
    let p = null;
    for (const [n, v] of pts) { const x = f.tx(n), y = f.ty(v); f.c.rect(x - 3, y - 3, 7, 7, col); if (p) f.c.line(p[0], p[1], x, y, col, 3, dash); p = [x, y]; }
  };
  Object.entries(tp).forEach(([name, rs], i) => {
    const col = colorOf(name, i);
    series(rs.map((r) => [r.senders, r.deliveredRate]), col, 0);
    f.legend(`${name} deliv.`, col);
  });
  Object.entries(raw).forEach(([name, byN], i) => {
    const col = name.startsWith("ours") ? [20, 100, 40] : [90, 90, 90];
    series(Object.entries(byN).map(([n, v]) => [Number(n), v]), col, 8);
    f.legend(name.startsWith("ours") ? "ours raw send" : "v2 raw send", col, 8);
  });
  return f.c.png();
}
