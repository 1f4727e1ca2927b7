// tests/faults/procs.mjs - real processes for the fault tests: daemons, senders, Redis and
// Postgres control, and socket.io clients that record every message they are shown.
// The bash wrapper starts PostgreSQL and Redis with tests/harness/lib.sh (daemon_env) and passes, in
// the environment, how to control them (harness_export_controls) and the daemons' shared settings.
import { spawn, execSync } from 'node:child_process';
import readline from 'node:readline';
import { io } from 'socket.io-client';
import pg from 'pg';
import { env, sleep } from '../harness/check.mjs';
import { Daemon } from '../harness/daemon.mjs';
import { token } from '../harness/jwt.mjs';

export { env, sleep, waitUntil } from '../harness/check.mjs';
const HERE = new URL('.', import.meta.url).pathname;

// Direction: who sends, who receives, which queue carries it.
export const DIRECTIONS = {
	'consumers->workers': { sender: 'consumers', receiver: 'workers', queue: 'chat-messages' },
	'workers->consumers': { sender: 'workers', receiver: 'consumers', queue: 'chat-replies' },
};

// receivingDaemon: chat-outboxd for one receiving service, with a fixed identity (a restart takes
// its jobs back at once) and 1 s pings (a dead client is noticed within a fault's window).
export const receivingDaemon = ({ service, queue, port, extra = [] }) => new Daemon({
	name: `chat-outboxd ${service}`, port,
	flags: ['--service', service, '--queue', queue, '--identity', `${service}-test`, '--ping-interval', '1000', '--ping-timeout', '2000', ...extra],
});

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
	const socket = io(`http://127.0.0.1:${port}`, { auth: { token: token(chats, { sub: name }) }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
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
