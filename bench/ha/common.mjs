// bench/ha/common.mjs - what both failover benchmarks share: a sender that records commit times,
// a client that records when it is shown each message, and the summary.
import { createRequire } from 'node:module';
import { receivingDaemon, watcher, env } from '../../tests/faults/procs.mjs';

export { sleep, waitUntil, env } from '../../tests/faults/procs.mjs';

// npm packages come from tests/node_modules, as for the HA suites whose processes this reuses
const require = createRequire(new URL('../../tests/package.json', import.meta.url));
export const pg = require('pg');
export const Redis = require('ioredis');

export const CHAT = 51;

// Receiver: chat-outboxd (workers) and a socket.io client; shownAt(id) is when the client saw it.
export async function receiver() {
	const daemon = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('DAEMON_PORT')) });
	await daemon.start();
	const client = watcher({ port: Number(env('DAEMON_PORT')), chats: [CHAT], name: 'bench-ha' });
	const shown = new Map();
	client.socket.on('message', (m) => shown.set(m.id, Date.now()));
	return { daemon, client, shown };
}

// Sender: one connection to `url` (reconnected after an error); send() returns { id, at } with the
// commit time, or null when the send failed (the sender sees the error). started keeps when each
// committed send was begun: a send begun after an event is certainly committed after it, whereas a
// commit time read from the event loop may be late by whatever blocked it (an execSync).
export class Sender {
	constructor(url) {
		this.url = url;
		this.committed = new Map(); // id -> commit time
		this.started = new Map(); // id -> when send() was called
	}
	async send(n) {
		const startedAt = Date.now();
		try {
			if (!this.db) {
				this.db = new pg.Client({ connectionString: this.url });
				this.db.on('error', () => {});
				await this.db.connect();
			}
			const { rows } = await this.db.query('SELECT id FROM consumers.send_message($1, $2)', [CHAT, `msg ${n}`]);
			const at = Date.now();
			this.committed.set(rows[0].id, at);
			this.started.set(rows[0].id, startedAt);
			return { id: rows[0].id, at };
		} catch {
			this.db?.end().catch(() => {});
			this.db = null;
			return null;
		}
	}
	close() {
		this.db?.end().catch(() => {});
	}
}

const pct = (xs, p) => {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};
export const summary = (name, xs) =>
	`${name}: n=${xs.length} p50=${pct(xs, 50)} ms p99=${pct(xs, 99)} ms max=${Math.max(...xs)} ms`;
