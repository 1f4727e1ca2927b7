// tests/harness/daemon.mjs - chat-outboxd for Node test peers, started like tests/harness/daemon.sh
// starts it: the settings every daemon of a test shares (Redis, Postgres, JWT secret, log level)
// come from the environment that daemon_env exported; each instance adds its own flags, which win.
//   const d = new Daemon({ name, port, flags: ['--service', 'workers', ...] });   (name: for messages)
//   await d.start(extraFlags)   spawn and wait until /healthz answers, past "starting"; d.exited resolves on exit
//   await d.metric(name)        one counter from /metrics
//   await d.scrape()            add this instance's counters to d.scraped before it goes away
//   await d.stop(signal)        SIGTERM (must exit 0) or SIGKILL
import { spawn } from 'node:child_process';
import { env, waitUntil } from './check.mjs';

export class Daemon {
	constructor({ name = 'chat-outboxd', port, flags = [] }) {
		Object.assign(this, { name, port, flags });
		this.scraped = { duplicates: 0, processed: 0, failed: 0 };
	}
	start(extra = []) {
		const args = ['--listen', `127.0.0.1:${this.port}`, ...this.flags, ...extra];
		// daemon logs go to our stderr, which the suite's .sh keeps in $H_DIR/daemon.log
		this.proc = spawn(env('CHAT_OUTBOXD'), args, { stdio: ['ignore', 'ignore', 'inherit'] });
		this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
		return this.ready();
	}
	// ready: /healthz answers, and not "starting" (a daemon admits clients once it has read the inbox;
	// with a server down it answers "unavailable", which a test that starts it so expects)
	async ready() {
		await waitUntil(`${this.name} to listen on ${this.port}`, async () => {
			const r = await fetch(`http://127.0.0.1:${this.port}/healthz`).catch(() => null);
			return r !== null && (await r.json().catch(() => ({}))).status !== 'starting';
		}, 20000);
	}
	async metric(name) {
		const r = await fetch(`http://127.0.0.1:${this.port}/metrics`);
		const m = (await r.text()).match(new RegExp(`^${name} (\\S+)$`, 'm'));
		return m ? Number(m[1]) : 0;
	}
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
		if (signal === 'SIGTERM' && r.code !== 0) throw new Error(`${this.name} exited ${JSON.stringify(r)} on SIGTERM`);
		return r;
	}
}
