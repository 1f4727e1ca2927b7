// Percentiles (nearest rank) and formatting.
export function pct(sorted, p) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
export function summary(values) {
  const s = Float64Array.from(values).sort();
  return { n: s.length, p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), max: s.length ? s[s.length - 1] : NaN };
}
export function ms(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return "-";
  if (v < 10) return `${v.toFixed(2)} ms`;
  if (v < 100) return `${v.toFixed(1)} ms`;
  return `${Math.round(v)} ms`;
}
export function range(vals, f = ms) {
  const v = vals.filter((x) => !Number.isNaN(x));
  if (!v.length) return "-";
  const lo = Math.min(...v), hi = Math.max(...v);
  return v.length === 1 || f(lo) === f(hi) ? f(lo) : `${f(lo).replace(/ ms$/, "")}-${f(hi)}`;
}
export function num(v, d = 0) {
  if (v === undefined || v === null || Number.isNaN(v)) return "-";
  return Number(v).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
}
export function table(headers, rows) {
  const out = [`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`];
  for (const r of rows) out.push(`| ${r.join(" | ")} |`);
  return out.join("\n");
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const now = () => performance.now();
