// tests/faults/procs.mjs - real processes for the fault tests: daemons, senders, Redis and
// Postgres control, and socket.io clients that record every message they are shown.
// The bash wrapper starts PostgreSQL and Redis with tests/harness/lib.sh and passes, in the
// environment, how to control them (REDIS_PORT, REDIS_START, PG_RESTART, PGURL, CHAT_OUTBOXD).
import { spawn, execSync } from 'node:child_process';
import readline from 'node:readline';
import { io } from 'socket.io-client';
import pg from 'pg';
import { signToken } from '../lib/jwt.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const env = (name) => {
	if (!process.env[name]) throw new Error(`${name} is not set (run through the .sh wrapper)`);
	return process.env[name];
};
export const SECRET = 'fault-test-secret-of-32-bytes-or-more';
const HERE = new URL('.', import.meta.url).pathname;

// Direction: who sends, who receives, which queue carries it.
export const DIRECTIONS = {
	'consumers->workers': { sender: 'consumers', receiver: 'workers', queue: 'chat-messages' },
	'workers->consumers': { sender: 'workers', receiver: 'consumers', queue: 'chat-replies' },
};

export async function waitFor(what, fn, timeoutMs = 30000, everyMs = 50) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		let last;
		try {
			if (await fn()) return;
		} catch (e) {
			last = e;
		}
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
		await sleep(everyMs);
	}
}

// A chat-outboxd process for one receiving service.
export class Daemon {
	constructor({ service, queue, port, extra = [] }) {
		Object.assign(this, { service, queue, port, extra });
		this.scraped = { duplicates: 0, processed: 0, failed: 0 };
	}
	start(extra = []) {
		const args = ['--service', this.service, '--queue', this.queue, '--listen', `127.0.0.1:${this.port}`,
			'--database-url', env('PGURL'), '--redis-url', env('REDIS_URL'), '--jwt-secret', SECRET,
			'--identity', `${this.service}-test`, '--ping-interval', '1000', '--ping-timeout', '2000', ...this.extra, ...extra];
		// daemon logs go to our stderr, which the .sh wrapper keeps in $H_DIR/daemon.log
		this.proc = spawn(env('CHAT_OUTBOXD'), args, { stdio: ['ignore', 'ignore', 'inherit'] });
		this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
		return this.ready();
	}
	async ready() {
		await waitFor(`chat-outboxd ${this.service} to listen on ${this.port}`, async () => {
			const r = await fetch(`http://127.0.0.1:${this.port}/healthz`).catch(() => null);
			return r !== null;
		}, 20000);
	}
	async metric(name) {
		const r = await fetch(`http://127.0.0.1:${this.port}/metrics`);
		const m = (await r.text()).match(new RegExp(`^${name} (\\S+)$`, 'm'));
		return m ? Number(m[1]) : 0;
	}
	// scrape adds this instance's counters to the totals before it goes away (metrics live in memory).
	async scrape() {
		try {
			this.scraped.duplicates += await this.metric('chat_outboxd_duplicates_skipped_total');
			this.scraped.processed += await this.metric('chat_outboxd_jobs_processed_total');
			this.scraped.failed += await this.metric('chat_outboxd_jobs_failed_total');
		} catch {
			/* a crashed instance has nothing to scrape */
		}
	}
	async stop(signal = 'SIGTERM') {
		if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
		if (signal === 'SIGTERM') await this.scrape();
		this.proc.kill(signal);
		const r = await this.exited;
		if (signal === 'SIGTERM' && r.code !== 0) throw new Error(`chat-outboxd ${this.service} exited ${JSON.stringify(r)} on SIGTERM`);
		return r;
	}
}

// The sending service as a separate process (tests/faults/sender.mjs).
export class Sender {
	constructor({ service, chat, onSaved }) {
		Object.assign(this, { service, chat, onSaved });
	}
	async start() {
		this.proc = spawn('node', [`${HERE}sender.mjs`, '--pg', env('PGURL'), '--service', this.service, '--chat', String(this.chat)],
			{ stdio: ['pipe', 'pipe', 'inherit'] });
		this.waiting = new Map();
		const ready = new Promise((resolve) => (this.onReady = resolve));
		readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
			if (line === 'ready') return this.onReady();
			const [, n, id, ts] = line.split(' ');
			this.onSaved?.(Number(n), id, Number(ts));
			this.waiting.get(Number(n))?.(id);
		});
		await ready;
	}
	send(n, prefix) {
		return new Promise((resolve, reject) => {
			this.waiting.set(n, resolve);
			this.proc.stdin.write(`send ${n}${prefix ? ` ${prefix}` : ''}\n`);
			setTimeout(() => reject(new Error(`send ${n} did not commit within 20 s`)), 20000).unref();
		});
	}
	async stop() {
		this.proc.stdin.end();
		this.proc.kill('SIGTERM');
		await new Promise((r) => (this.proc.exitCode !== null ? r() : this.proc.once('exit', r)));
	}
}

// A socket.io client that records every message it is shown, with its arrival time.
export function watcher({ port, chats, name, onMessage }) {
	const token = signToken({ sub: name, chats, ttlSeconds: 3600 }, SECRET);
	const socket = io(`http://127.0.0.1:${port}`, { auth: { token }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
	const seen = [];
	socket.on('message', (m) => {
		seen.push({ ...m, at: Date.now() });
		onMessage?.(m);
	});
	return { socket, seen, name };
}

export const redis = {
	stop: () => execSync(`redis-cli -p ${env('REDIS_PORT')} shutdown`, { stdio: 'ignore' }),
	start: () => execSync(env('REDIS_START'), { stdio: 'ignore' }),
	pause: () => execSync(`kill -STOP $(cat ${env('REDIS_PIDFILE')})`),
	resume: () => execSync(`kill -CONT $(cat ${env('REDIS_PIDFILE')})`),
	kill: () => execSync(`kill -9 $(cat ${env('REDIS_PIDFILE')})`),
};

export const postgres = {
	restart: (mode = 'fast') => execSync(`${env('PG_CTL')} restart -w -m ${mode}`, { stdio: 'ignore' }),
	async query(sql, params = []) {
		// a fresh connection each time: Postgres restarts during these tests
		for (let attempt = 0; ; attempt++) {
			const c = new pg.Client({ connectionString: env('PGURL') });
			try {
				await c.connect();
				const r = await c.query(sql, params);
				return r.rows;
			} catch (e) {
				const transient = !e.code || /^(08|57)/.test(e.code) || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET';
				if (!transient || attempt > 100) throw e;
				await sleep(100);
			} finally {
				c.end().catch(() => {});
			}
		}
	},
};
