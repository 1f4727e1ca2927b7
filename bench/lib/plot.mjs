// Benchmark plots drawn by gnuplot (Debian package gnuplot-nox). Each plot is three files in one
// folder: <name>.dat (the plotted points, gnuplot's data format, so a plot can be drawn again
// without rerunning the benchmark), <name>.png and <name>.svg.
//
//   node bench/lib/plot.mjs DIR    draws every latency.dat / throughput.dat found in DIR again
//
// A .dat file holds one block per series, blocks separated by two blank lines (gnuplot's `index`),
// each block opened by a line `# series: <title>` (and `# style: raw` for a dashed raw-rate line).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const COLORS = { "v1": "#e67814", "v2": "#285ac8", "v2 polling": "#78a0e6", "ours": "#14a03c", "ours polling": "#8cd28c" };
const OTHER_COLORS = ["#c82828", "#7828a0", "#5a5a5a"];
const RAW_COLORS = { ours: "#146428", other: "#5a5a5a" };
const colorOf = (title, i) => COLORS[title] || OTHER_COLORS[i % OTHER_COLORS.length];

// ---- data files ----

function writeDat(file, blocks) {
  const text = blocks.map((b) => [`# series: ${b.title}`, ...(b.style ? [`# style: ${b.style}`] : []), ...b.points.map(([x, y]) => `${x} ${y}`)].join("\n")).join("\n\n\n");
  fs.writeFileSync(file, text + "\n");
}

function readDat(file) {
  return fs.readFileSync(file, "utf8").split(/\n\n\n/).map((chunk) => {
    const lines = chunk.split("\n").filter((l) => l.trim() !== "");
    const meta = (key) => lines.find((l) => l.startsWith(`# ${key}: `))?.slice(key.length + 4);
    return { title: meta("series") ?? "?", style: meta("style"), points: lines.filter((l) => !l.startsWith("#")).map((l) => l.split(" ").map(Number)) };
  }).filter((b) => b.points.length);
}

// ---- gnuplot ----

const q = (s) => `"${String(s).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

const COMMON = [
  `set grid xtics ytics mxtics lc rgb "#dddddd" lt 1`,
  `set border 3 lw 1.2`,
  `set tics nomirror out`,
  `set key opaque box lc rgb "#999999" samplen 3 spacing 1.3 Left reverse width 1`,
];

// Draws one chart to <base>.png and <base>.svg (same size and fonts) from the blocks of <base>.dat;
// `series[i]` is the gnuplot style of block i, `settings` the chart's own axes and key.
function chart(base, { title, xlabel, ylabel, settings, series }) {
  const plot = series.map((style, i) => `${q(base + ".dat")} index ${i} using 1:2 ${style}`).join(", \\\n  ");
  const script = [
    `set terminal pngcairo size 1100,650 noenhanced font "DejaVu Sans,12" linewidth 1.5`,
    `set output ${q(base + ".png")}`,
    ...COMMON,
    `set title ${q(title)} font ",14"`,
    `set xlabel ${q(xlabel)}`,
    `set ylabel ${q(ylabel)}`,
    ...settings,
    `plot ${plot}`,
    `set terminal svg size 1100,650 dynamic noenhanced font "DejaVu Sans,12" linewidth 1.5 background "white"`,
    `set output ${q(base + ".svg")}`,
    `replot`,
    `unset output`,
  ].join("\n");
  const r = spawnSync("gnuplot", [], { input: script, encoding: "utf8" });
  if (r.error?.code === "ENOENT") throw new Error("plots need gnuplot (Debian package gnuplot-nox; scripts/setup.sh installs it)");
  if (r.status !== 0) throw new Error(`gnuplot failed for ${base}: ${r.stderr || `exit ${r.status}`}`);
}

// CDF of send -> shown latency, one step line per variant, log x.
function drawLatency(base, blocks) {
  chart(base, {
    title: "Latency send → shown (CDF; 100 messages, one per 100 ms; every run pooled)",
    xlabel: "latency (ms, log scale)",
    ylabel: "messages shown within the latency (%)",
    settings: [
      `set logscale x 10`, `set xrange [0.5:2000]`, `set yrange [0:100]`,
      `set xtics ("0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100, "200" 200, "500" 500, "1 s" 1000, "2 s" 2000)`,
      `set ytics (0, 25, 50, 75, 90, 100)`, `set format y "%g%%"`, `set key top left`,
    ],
    series: blocks.map((b, i) => `with steps lw 2.5 lc rgb ${q(colorOf(b.title, i))} title ${q(b.title)}`),
  });
}

// Delivered end to end per variant (solid, points) and the raw send rates (dashed), log2 x.
function drawThroughput(base, blocks) {
  let delivered = 0;
  chart(base, {
    title: "Throughput vs concurrent senders",
    xlabel: "concurrent senders (log scale)",
    ylabel: "messages per second",
    settings: [
      `set logscale x 2`, `set xrange [0.8:160]`, `set xtics (1, 2, 4, 8, 16, 32, 64, 128)`,
      `set yrange [0:*]`, `set format y "%.0f"`, `set key outside right top`,
    ],
    series: blocks.map((b) => b.style === "raw"
      ? `with linespoints lw 2 dt 2 pt 6 ps 1.2 lc rgb ${q(b.title.startsWith("ours") ? RAW_COLORS.ours : RAW_COLORS.other)} title ${q(b.title)}`
      : `with linespoints lw 2.5 pt 7 ps 1.2 lc rgb ${q(colorOf(b.title, delivered++))} title ${q(`${b.title} delivered`)}`),
  });
}

// ---- entry points for bench/lib/main.mjs: results in, files out ----

// latency: { variant: [ { samples: [ms, ...] }, ... ] } -> DIR/latency.{dat,png,svg}
export function plotLatency(dir, latency) {
  const blocks = Object.entries(latency).map(([title, runs]) => {
    const s = runs.flatMap((r) => r.samples || []).sort((a, b) => a - b);
    return { title, points: s.map((v, k) => [v, ((k + 1) / s.length) * 100]) };
  }).filter((b) => b.points.length);
  if (!blocks.length) return;
  const base = path.join(dir, "latency");
  writeDat(base + ".dat", blocks);
  drawLatency(base, blocks);
}

// tp: { variant: [ { senders, deliveredRate }, ... ] }, raw: { name: { senders: rate } }
// -> DIR/throughput.{dat,png,svg}
export function plotThroughput(dir, tp, raw = {}) {
  const blocks = [
    ...Object.entries(tp).map(([title, rs]) => ({ title, points: rs.map((r) => [r.senders, r.deliveredRate]) })),
    ...Object.entries(raw).map(([title, byN]) => ({ title, style: "raw", points: Object.entries(byN).map(([n, v]) => [Number(n), v]) })),
  ].filter((b) => b.points.length);
  if (!blocks.length) return;
  const base = path.join(dir, "throughput");
  writeDat(base + ".dat", blocks);
  drawThroughput(base, blocks);
}

// ---- command line: draw again from kept .dat files ----

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) { console.error("usage: node bench/lib/plot.mjs DIR   (draws DIR/latency.dat and DIR/throughput.dat)"); process.exit(2); }
  let drawn = 0;
  for (const [name, draw] of [["latency", drawLatency], ["throughput", drawThroughput]]) {
    const base = path.join(dir, name);
    if (!fs.existsSync(base + ".dat")) continue;
    draw(base, readDat(base + ".dat"));
    console.log(`written: ${base}.png ${base}.svg`);
    drawn++;
  }
  if (!drawn) { console.error(`plot: no latency.dat or throughput.dat in ${dir}`); process.exit(1); }
}
