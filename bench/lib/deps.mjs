// npm packages for the runner come from bench/baseline/node_modules (installed by `npm ci` in run.sh).
import { createRequire } from "node:module";
const require = createRequire(new URL("../baseline/package.json", import.meta.url));
export const pg = require("pg");
export const IORedis = require("ioredis");
export const { io } = require("socket.io-client");
import fs from "node:fs";
const NM = new URL("../baseline/node_modules/", import.meta.url);
export const versions = Object.fromEntries(
  ["bullmq", "ioredis", "pg", "socket.io", "socket.io-client"].map((n) => [n, JSON.parse(fs.readFileSync(new URL(`${n}/package.json`, NM), "utf8")).version]),
);
