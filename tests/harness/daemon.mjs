// tests/harness/daemon.mjs - chat-outboxd for Node test peers, started like tests/harness/daemon.sh
// starts it: the settings every daemon of a test shares (Redis, Postgres, JWT secret, log level)
// come from the environment that daemon_env exported; each instance adds its own flags, which win.
//   const d = new Daemon({ name, port, flags: ['--service', 'workers', ...] });   (name: for messages)
//   await d.start(extraFlags)   spawn and wait until /healthz answers, past "starting"; d.exited resolves on exit
//   await d.metric(name)        one counter from /metrics
//   d.duplicates                duplicate jobs skipped by every instance this Daemon started, counted
//                               from their "inbox commit" log lines (a /metrics scrape before a stop
//                               misses what the instance does while it drains after SIGTERM)
//   await d.stop(signal)        SIGTERM (must exit 0) or SIGKILL
import { spawn } from 'node:child_process';
import { env, waitUntil } from './check.mjs';

export class Daemon {
	constructor({ name = 'chat-outboxd', port, flags = [] }) {
		Object.assign(this, { name, port, flags });
		this.duplicates = 0;
	}
	start(extra = [], { serversDown = false } = {}) {
		const args = ['--listen', `127.0.0.1:${this.port}`, ...this.flags, ...extra];
		// daemon logs go on to our stderr, which the suite's .sh keeps in $H_DIR/daemon.log
		this.proc = spawn(env('CHAT_OUTBOXD'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
		let partial = '';
		this.proc.stderr.on('data', (chunk) => {
			process.stderr.write(chunk);
			const lines = (partial + chunk.toString()).split('\n');
			partial = lines.pop();
			for (const line of lines) {
				const m = / inbox commit: \d+ job\(s\), \d+ new, (\d+) duplicate\(s\)$/.exec(line);
				if (m) this.duplicates += Number(m[1]);
			}
		});
		this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
		return this.ready({ serversDown });
	}
	// ready: /healthz says "ok": Redis and Postgres answer and the gateway knows where the inbox stands,
	// the state in which it admits clients (docs/gateway.md, /healthz). A test that starts the daemon with
	// a server down passes serversDown: then "unavailable" will do too, but never "starting".
	async ready({ serversDown = false } = {}) {
		await waitUntil(`${this.name} to listen on ${this.port}`, async () => {
			const r = await fetch(`http://127.0.0.1:${this.port}/healthz`).catch(() => null);
			const status = r && (await r.json().catch(() => ({}))).status;
			return status === 'ok' || (serversDown && status === 'unavailable');
		}, 20000);
	}
	async metric(name) {
		const r = await fetch(`http://127.0.0.1:${this.port}/metrics`);
		const m = (await r.text()).match(new RegExp(`^${name} (\\S+)$`, 'm'));
		return m ? Number(m[1]) : 0;
	}
	async stop(signal = 'SIGTERM') {
		if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
		this.proc.kill(signal);
		const r = await this.exited;
		if (signal === 'SIGTERM' && r.code !== 0) throw new Error(`${this.name} exited ${JSON.stringify(r)} on SIGTERM`);
		return r;
	}
}
