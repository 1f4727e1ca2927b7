// Small helpers shared by the baseline services: connection settings from the environment.
// The write-up hard-codes { host: "127.0.0.1", port: 6379 }; here the host/port come from REDIS_URL
// so the benchmark can pick free ports. Nothing else differs.
export function redisConnection(url = process.env.REDIS_URL || "redis://127.0.0.1:6379") {
  const u = new URL(url);
  const c = { host: u.hostname || "127.0.0.1", port: Number(u.port || 6379) };
  if (u.password) c.password = decodeURIComponent(u.password);
  if (u.username) c.username = decodeURIComponent(u.username);
  return c;
}

export const DATABASE_URL = () => process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/baseline";
export const QUEUE = () => process.env.QUEUE || "baseline-chat-messages";

export function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const v = process.argv[i + 1];
  return v === undefined || v.startsWith("--") ? true : v;
}
