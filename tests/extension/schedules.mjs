// tests/extension/schedules.mjs - the peers of tests/extension/schedules.sh: a seeded random schedule of
// concurrent senders, the real bullmq Workers that consume what the relays queue, and the count of what
// arrived against what committed. Three commands:
//
//   run <dir>        the schedule, until <dir>/stop exists. SENDERS sessions (env SCHEDULE_SENDERS, default
//                    24), each its own connection, each transaction one plan drawn from the session's own
//                    generator (seeded from SCHEDULE_SEED and the session's number, so a seed gives every
//                    session the same plans whatever the timing): an isolation level (READ COMMITTED,
//                    REPEATABLE READ, SERIALIZABLE); a read first (a SELECT, which takes a REPEATABLE READ or
//                    SERIALIZABLE transaction's snapshot); a hold (a sleep: the "holder" sessions, the first
//                    SCHEDULE_HOLDERS, hold 0.2-3.5 s, long enough for a generation switch and the next
//                    rotation step with chat_outbox.retention = 1s; the others mostly none); one or two
//                    consumers.send_message calls, the last one sometimes inside a SAVEPOINT that is released
//                    or rolled back to; sometimes a hold after the sends (up to 1 s: a writer still running
//                    when its generation is closed); then COMMIT, ROLLBACK, or PREPARE TRANSACTION with COMMIT PREPARED /
//                    ROLLBACK PREPARED later from another session (SCHEDULE_PREPARE=0 leaves those out).
//                    SCHEDULE_RELAY_PASS=1 also runs a second relay: SELECT chat_outbox.relay_pass('consumers')
//                    in a loop on a connection of its own (the extension's SQL entry point, beside its worker).
//                    Writes <dir>/progress (JSON, rewritten every 200 ms: committed messages, reconnects, ...)
//                    and, when stopped, <dir>/messages.jsonl: one line per message attempted, with its fate,
//                    times, xid and the generation it went to (the outbox partition its transaction holds a
//                    write lock on), and <dir>/rotation.jsonl: the rotation's states, polled every 50 ms, for
//                    the report of a lost message (a stale read of the current generation, or a generation
//                    closed with a bound at or below the xid of a writer still running).
//   workers <file> <queue> <max partitions>
//                    a real bullmq Worker (concurrency 1) on <queue> and on <queue>-p0 .. -p<max-1>, each on its
//                    shard (partition mod shards, env SHARD_URLS); appends "<queue> <retaken 0|1> <body>" per
//                    processed job, in processing order, until SIGTERM; prints "ready" once all listen.
//   check <dir>      reads <dir>/messages.jsonl, <dir>/processed.txt (the workers' lines) and <dir>/stored.txt
//                    (every body consumers.messages holds once the schedule ended) and prints the counts; exits 1
//                    unless lost, twice, out of order, delivered-uncommitted and the bookkeeping mismatch are 0.
//
// Rules:
// - Only a message whose COMMIT (or COMMIT PREPARED) succeeded counts as committed. A message rolled back
//   (ROLLBACK, ROLLBACK TO SAVEPOINT, ROLLBACK PREPARED, a serialization failure: not retried, counted as
//   not committed) must never arrive. A COMMIT whose connection died under it (the cluster restarts when
//   the relay worker is SIGKILLed) is "in doubt" and settled by what consumers.messages holds afterwards;
//   every other message's fate is known here, and must agree with consumers.messages (the bookkeeping check).
// - Order: for two messages of one chat, B must arrive after A when B's send_message was issued after A's
//   COMMIT returned (times from this one process's monotonic clock), or when both are one transaction's and
//   A was sent first. An in-doubt message that committed counts as committed from the moment its session
//   reconnected (the restart was over by then). Jobs the stalled check handed out again (bullmq's own
//   redelivery after a lost connection, marked retaken) are left out of the order and twice counts.
// - Nothing here decides when the schedule ends or sleeps for a verdict: schedules.sh stops it after the
//   events it caused, and checks once the relays and workers are settled.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint() / 1000n) / 1000; // ms, monotonic

// a seeded generator, one per session: draw n is the first 32 bits of sha256("<seed>:<n>")
function generator(seed) {
	let n = 0;
	const next = () => createHash('sha256').update(`${seed}:${n++}`).digest().readUInt32BE(0) / 4294967296;
	return {
		next,
		chance: (p) => next() < p,
		int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // lo..hi
		pick: (list) => list[Math.floor(next() * list.length)],
	};
}

// a lost connection (the socket failed, or the server ended the session with a FATAL, as every session
// gets when the cluster restarts), as opposed to an ERROR the server reported for a statement
const lostConnection = (e) => !e.severity || e.severity === 'FATAL' || e.severity === 'PANIC';

async function run(dir) {
	const seed = Number(process.env.SCHEDULE_SEED);
	const senders = Number(process.env.SCHEDULE_SENDERS || 24);
	const holders = Number(process.env.SCHEDULE_HOLDERS || 10);
	const prepare = process.env.SCHEDULE_PREPARE !== '0';
	const relayPass = process.env.SCHEDULE_RELAY_PASS === '1';
	const CHATS = [-4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
	const stopFile = `${dir}/stop`;
	let stopping = false;
	const messages = []; // every message attempted
	const pendingDoubt = new Map(); // session -> messages whose COMMIT was in flight when the connection died
	const stats = { txs: 0, committedTxs: 0, rolledBack: 0, prepared: 0, serialization: 0, otherErrors: 0,
		lostTxs: 0, reconnects: 0, relayPasses: 0, relayPassErrors: 0, iso: {}, anomalies: [], relayPassWhy: new Set() };
	const committedCount = () => messages.reduce((n, m) => n + (m.fate === 'committed' ? 1 : 0), 0);
	const writeProgress = () => {
		fs.writeFileSync(`${dir}/progress.tmp`, JSON.stringify({ committed: committedCount(), ...stats, anomalies: stats.anomalies.length,
			relayPassWhy: [...stats.relayPassWhy] }));
		fs.renameSync(`${dir}/progress.tmp`, `${dir}/progress`);
	};
	const progressTimer = setInterval(() => {
		writeProgress();
		if (fs.existsSync(stopFile)) stopping = true;
	}, 200);

	// one connection per session, opened again (with a pause) whenever it is lost
	async function connect(tag) {
		for (let attempt = 0; ; attempt++) {
			const c = new pg.Client({ connectionString: process.env.PGURL, application_name: `schedule-${tag}` });
			c.on('error', () => {});
			try {
				await c.connect();
				if (attempt > 0) stats.reconnects++;
				return c;
			} catch {
				c.end().catch(() => {});
				await sleep(100);
			}
		}
	}

	// prepared transactions, finished by another session: {gid, decision, due, msgs, prepareInDoubt, tried}
	const toFinish = [];
	let finisherDone = false;
	async function finisher() {
		let c = await connect('finisher');
		for (;;) {
			toFinish.sort((x, y) => x.due - y.due);
			const item = toFinish[0];
			if (!item) {
				if (stopping && sendersLeft === 0) break;
				await sleep(20);
				continue;
			}
			if (item.due > now() && !(stopping && sendersLeft === 0)) {
				await sleep(Math.min(20, item.due - now()));
				continue;
			}
			try {
				const r = await c.query(`${item.decision === 'commit' ? 'COMMIT' : 'ROLLBACK'} PREPARED '${item.gid}'`);
				const t = now();
				for (const m of item.msgs) {
					if (m.sp === 'rolledback') continue;
					m.fate = item.decision === 'commit' ? 'committed' : 'aborted';
					if (m.fate === 'committed') m.c = t;
				}
				if (r.command !== (item.decision === 'commit' ? 'COMMIT' : 'ROLLBACK')) stats.anomalies.push(`${item.gid}: ${r.command}`);
				toFinish.shift();
			} catch (e) {
				if (lostConnection(e)) {
					item.tried = true;
					c.end().catch(() => {});
					c = await connect('finisher');
					continue;
				}
				toFinish.shift();
				if (e.code === '42704' && (item.tried || item.prepareInDoubt)) {
					// gone: our own earlier attempt finished it before the connection died (this session is the
					// only one that finishes our transactions), or its PREPARE never happened
					const t = now();
					const done = item.tried && !item.prepareInDoubt ? item.decision : 'rollback';
					for (const m of item.msgs) {
						if (m.sp === 'rolledback') continue;
						if (item.tried && item.prepareInDoubt) { m.fate = 'indoubt'; m.c = t; continue; }
						m.fate = done === 'commit' ? 'committed' : 'aborted';
						if (m.fate === 'committed') m.c = t;
					}
				} else {
					stats.anomalies.push(`${item.gid}: ${e.code} ${e.message}`);
					for (const m of item.msgs) if (m.sp !== 'rolledback') { m.fate = 'indoubt'; m.c = Infinity; }
				}
			}
		}
		// anything of ours still prepared would hold the rotation back for ever
		const left = await c.query("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'sched-%'");
		for (const { gid } of left.rows) stats.anomalies.push(`${gid} still prepared at the end`);
		await c.end();
		finisherDone = true;
	}

	async function relayLoop() {
		const rnd = generator(seed * 7919 + 1);
		let c = await connect('relay-pass');
		while (!stopping || sendersLeft > 0) {
			try {
				await c.query("SELECT chat_outbox.relay_pass('consumers')");
				stats.relayPasses++;
			} catch (e) {
				stats.relayPassErrors++;
				if (stats.relayPassWhy.size < 5) stats.relayPassWhy.add(`${e.code ?? 'connection'}: ${e.message}`);
				if (lostConnection(e)) {
					c.end().catch(() => {});
					c = await connect('relay-pass');
				}
			}
			await sleep(rnd.int(0, 60));
		}
		await c.end().catch(() => {});
	}

	// the rotation's committed states as they change (for the report of a lost message), every 50 ms
	const rotation = [];
	async function rotationWatch() {
		let c = await connect('rotation-watch');
		let last = '';
		while (!stopping || sendersLeft > 0) {
			try {
				const r = await c.query(`SELECT current, closed_xmax::text AS closed, empty::text AS empty, truncated
					FROM chat_outbox.outbox_rotation WHERE service = 'consumers'`);
				const row = r.rows[0];
				const key = JSON.stringify(row);
				if (key !== last) { rotation.push({ at: now(), ...row }); last = key; }
			} catch (e) {
				if (lostConnection(e)) { c.end().catch(() => {}); c = await connect('rotation-watch'); }
			}
			await sleep(50);
		}
		await c.end().catch(() => {});
	}

	let sendersLeft = senders;
	async function session(k) {
		const rnd = generator(seed * 1000 + k);
		const holder = k < holders;
		let c = await connect(`s${k}`);
		for (let t = 0; !stopping; t++) {
			// the plan: every choice drawn up front, so the seed alone decides it
			const iso = holder ? rnd.pick(['REPEATABLE READ', 'REPEATABLE READ', 'SERIALIZABLE', 'SERIALIZABLE', 'READ COMMITTED'])
				: rnd.pick(['READ COMMITTED', 'READ COMMITTED', 'REPEATABLE READ', 'SERIALIZABLE']);
			// what it reads: its chat's messages (a SERIALIZABLE one then conflicts with the chat's other
			// senders, and often fails), or a setting (still a snapshot)
			const readChat = rnd.chance(0.4);
			const n = rnd.chance(0.25) ? 2 : 1;
			const chats = [rnd.pick(CHATS)];
			if (n === 2) chats.push(rnd.chance(0.6) ? chats[0] : rnd.pick(CHATS));
			const sp = rnd.chance(0.25) ? (rnd.chance(0.4) ? 'rolledback' : 'released') : 'none';
			const holdBefore = holder ? rnd.int(200, 3500) : (rnd.chance(0.3) ? rnd.int(0, 30) : 0);
			// a hold after the sends keeps a writer running across rotation steps (the close bound's race)
			const holdAfter = rnd.chance(holder ? 0.1 : iso === 'READ COMMITTED' ? 0.2 : 0.1) ? rnd.int(holder ? 0 : 100, holder ? 300 : 1000) : 0;
			const endRoll = rnd.next();
			const end = endRoll < 0.1 ? 'rollback' : prepare && endRoll < 0.22 ? 'prepare' : 'commit';
			const decision = rnd.chance(0.8) ? 'commit' : 'rollback';
			const finishIn = rnd.int(20, 500);
			const pause = holder ? rnd.int(0, 200) : rnd.int(0, 40);
			const gid = `sched-${k}-${t}`;
			const msgs = [];
			stats.txs++;
			stats.iso[iso] = (stats.iso[iso] || 0) + 1;
			let phase = 'open';
			try {
				await c.query(`BEGIN ISOLATION LEVEL ${iso}`);
				// the read that takes the snapshot of a REPEATABLE READ or SERIALIZABLE transaction
				if (readChat) await c.query('SELECT count(*) FROM consumers.messages WHERE chat_id = $1', [chats[0]]);
				else await c.query('SELECT current_setting($1)', ['transaction_isolation']);
				if (holdBefore) await sleep(holdBefore);
				for (let i = 0; i < n; i++) {
					const inSp = sp !== 'none' && i === n - 1;
					if (inSp) await c.query('SAVEPOINT s');
					const m = { b: `${seed}.${k}.${t}.${i}`, ch: chats[i], k, t, i, iso, hold: holdBefore, after: holdAfter,
						sp: inSp ? sp : 'none', end: end === 'prepare' ? `prepare-${decision}` : end, fate: 'aborted', s: now(), c: null };
					msgs.push(m);
					messages.push(m);
					await c.query('SELECT 1 FROM consumers.send_message($1, $2, $3)', [m.ch, m.b, `user-${k}`]);
					m.sent = now();
					if (inSp) await c.query(sp === 'rolledback' ? 'ROLLBACK TO SAVEPOINT s' : 'RELEASE SAVEPOINT s');
				}
				// for the report of a lost message: its transaction's id and the generations its rows went to, as
				// the locks it holds say (never read from the generations themselves: a read would hold a lock on
				// each of them, which the truncate waits for)
				const x = await c.query(`SELECT pg_current_xact_id_if_assigned()::text AS xid, ARRAY(
					SELECT substring(c.relname FROM '[0-9]+$')::int FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
					WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.mode = 'RowExclusiveLock'
						AND c.relnamespace = 'consumers'::regnamespace AND c.relname ~ '^outbox_events_[0-9]+$' ORDER BY 1) AS gens`);
				const gens = x.rows[0].gens;
				for (const m of msgs) m.gen = gens.length === 1 ? gens[0] : gens.length ? gens[m.i === 0 ? 0 : gens.length - 1] : null;
				for (const m of msgs) m.xid = x.rows[0].xid;
				if (holdAfter) await sleep(holdAfter);
				if (end === 'rollback') {
					await c.query('ROLLBACK');
					stats.rolledBack++;
				} else if (end === 'commit') {
					phase = 'commit';
					const r = await c.query('COMMIT');
					const at = now();
					phase = 'open';
					if (r.command !== 'COMMIT') { stats.anomalies.push(`${gid}: COMMIT answered ${r.command}`); continue; }
					stats.committedTxs++;
					for (const m of msgs) if (m.sp !== 'rolledback') { m.fate = 'committed'; m.c = at; }
				} else {
					phase = 'prepare';
					const r = await c.query(`PREPARE TRANSACTION '${gid}'`);
					phase = 'open';
					if (r.command !== 'PREPARE') { stats.anomalies.push(`${gid}: PREPARE answered ${r.command}`); continue; }
					stats.prepared++;
					for (const m of msgs) if (m.sp !== 'rolledback') m.fate = 'prepared';
					toFinish.push({ gid, decision, due: now() + finishIn, msgs });
				}
			} catch (e) {
				if (lostConnection(e)) {
					stats.lostTxs++;
					if (phase === 'commit') {
						for (const m of msgs) if (m.sp !== 'rolledback') m.fate = 'indoubt';
						pendingDoubt.set(k, msgs);
					} else if (phase === 'prepare') {
						for (const m of msgs) if (m.sp !== 'rolledback') m.fate = 'prepared';
						toFinish.push({ gid, decision, due: 0, msgs, prepareInDoubt: true });
					}
					c.end().catch(() => {});
					c = await connect(`s${k}`);
					// the restart is over: a COMMIT that was in flight has happened by now, or never will
					for (const m of pendingDoubt.get(k) || []) m.c = now();
					pendingDoubt.delete(k);
				} else {
					if (e.code === '40001' || e.code === '40P01') stats.serialization++;
					else { stats.otherErrors++; if (stats.otherErrors <= 20) console.log(`session ${k}: ${e.code} ${e.message}`); }
					try { await c.query('ROLLBACK'); } catch (e2) {
						if (lostConnection(e2)) { c.end().catch(() => {}); c = await connect(`s${k}`); }
					}
				}
			}
			if (pause) await sleep(pause);
		}
		await c.end().catch(() => {});
		sendersLeft--;
	}

	console.log(`schedule seed ${seed}: ${senders} sessions (${holders} holders), prepare ${prepare ? 'on' : 'off'}, relay_pass loop ${relayPass ? 'on' : 'off'}`);
	// the rotation's first state is read before any session starts
	const watch = rotationWatch();
	while (!rotation.length) await sleep(10);
	const all = [watch, finisher(), ...Array.from({ length: senders }, (_, k) => session(k))];
	if (relayPass) all.push(relayLoop());
	await Promise.all(all);
	if (!finisherDone) stats.anomalies.push('the finisher did not finish');
	clearInterval(progressTimer);
	for (const m of messages) if (m.fate === 'prepared') { m.fate = 'indoubt'; m.c = Infinity; stats.anomalies.push(`${m.b} left prepared`); }
	fs.writeFileSync(`${dir}/messages.jsonl`, messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
	fs.writeFileSync(`${dir}/rotation.jsonl`, rotation.map((r) => JSON.stringify(r)).join('\n') + '\n');
	writeProgress();
	for (const a of stats.anomalies.slice(0, 20)) console.log(`anomaly: ${a}`);
	console.log(`schedule done: ${stats.txs} transactions (${Object.entries(stats.iso).map(([k, v]) => `${k} ${v}`).join(', ')}), ` +
		`${stats.committedTxs} committed, ${stats.rolledBack} rolled back, ${stats.prepared} prepared, ` +
		`${stats.serialization} serialization failures, ${stats.otherErrors} other errors, ${stats.lostTxs} cut by a lost connection, ` +
		`${stats.reconnects} reconnects, ${stats.relayPasses} relay_pass calls (${stats.relayPassErrors} failed` +
		`${stats.relayPassWhy.size ? `: ${[...stats.relayPassWhy].join('; ')}` : ''})`);
	process.exit(0);
}

async function workers(file, queue, maxText) {
	const { Worker } = await import('bullmq');
	const { default: IORedis } = await import('ioredis');
	const shards = process.env.SHARD_URLS.trim().split(/\s+/);
	const all = [];
	const start = (name, shard) => {
		const connection = new IORedis(shards[shard], { maxRetriesPerRequest: null });
		connection.on('error', () => {});
		// a job moved back by the stalled check (its first run's connection was lost) is marked retaken
		const w = new Worker(name, async (job) => {
			fs.appendFileSync(file, `${name} ${job.stalledCounter > 0 ? 1 : 0} ${job.data.body}\n`);
		}, { connection, concurrency: 1, lockDuration: 10000, stalledInterval: 5000 });
		w.on('error', () => {});
		all.push(w);
	};
	start(queue, 0);
	for (let p = 0; p < Number(maxText); p++) start(`${queue}-p${p}`, p % shards.length);
	await Promise.all(all.map((w) => w.waitUntilReady()));
	console.log('ready');
	process.on('SIGTERM', async () => { await Promise.all(all.map((w) => w.close(true))); process.exit(0); });
}

function check(dir) {
	const messages = fs.readFileSync(`${dir}/messages.jsonl`, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
	const stored = new Set(fs.readFileSync(`${dir}/stored.txt`, 'utf8').split('\n').filter(Boolean));
	const byBody = new Map(messages.map((m) => [m.b, m]));
	// the in-doubt ones: committed exactly when Postgres stored them
	let doubtCommitted = 0, doubtAborted = 0, mismatch = 0;
	const mismatches = [];
	for (const m of messages) {
		if (m.fate === 'indoubt') {
			if (stored.has(m.b)) { m.fate = 'committed'; doubtCommitted++; } else { m.fate = 'aborted'; doubtAborted++; }
			if (m.c === null || m.c === undefined) m.c = Infinity;
		} else if ((m.fate === 'committed') !== stored.has(m.b)) {
			mismatch++;
			if (mismatches.length < 5) mismatches.push(`${m.b} (${m.fate}, ${stored.has(m.b) ? '' : 'not '}stored)`);
		}
	}
	for (const b of stored) if (!byBody.has(b)) { mismatch++; if (mismatches.length < 5) mismatches.push(`${b} stored, never sent here`); }
	// what the workers processed, in processing order
	const lines = fs.existsSync(`${dir}/processed.txt`) ? fs.readFileSync(`${dir}/processed.txt`, 'utf8').split('\n').filter(Boolean) : [];
	const seen = new Map(); // body -> times processed, not counting the stalled check's redeliveries
	const retakenBodies = new Set();
	const order = []; // first processing of each body, in order, redeliveries left out
	let notCommitted = 0, unknown = 0, retaken = 0;
	const phantoms = [];
	for (const line of lines) {
		const [, flag, body] = line.split(' ');
		const m = byBody.get(body);
		if (!m) { unknown++; continue; }
		if (flag === '1') { retaken++; retakenBodies.add(body); if (!seen.has(body)) seen.set(body, 1); continue; }
		seen.set(body, (seen.get(body) || 0) + 1);
		if (seen.get(body) === 1) order.push(m);
	}
	const committed = messages.filter((m) => m.fate === 'committed');
	const lost = committed.filter((m) => !seen.has(m.b));
	const twice = [...seen.entries()].filter(([, n]) => n > 1).length;
	for (const b of seen.keys()) {
		const m = byBody.get(b);
		if (m.fate !== 'committed') { notCommitted++; if (phantoms.length < 5) phantoms.push(`${b} (${m.fate}, ${m.sp === 'rolledback' ? 'rolled back to its savepoint' : m.end})`); }
	}
	// out of order, per chat: B before A although B was sent after A's commit returned (reverse scan: the
	// earliest commit among the messages processed after B), or after A in A's own transaction
	let ooo = 0;
	const oooExamples = [];
	const chats = new Map();
	for (const m of order) if (m.fate === 'committed' && !retakenBodies.has(m.b)) {
		if (!chats.has(m.ch)) chats.set(m.ch, []);
		chats.get(m.ch).push(m);
	}
	for (const list of chats.values()) {
		let minC = Infinity, minM = null;
		const pos = new Map();
		for (let j = list.length - 1; j >= 0; j--) {
			const b = list[j];
			if (minC < b.s) {
				ooo++;
				if (oooExamples.length < 5) oooExamples.push(`chat ${b.ch}: ${b.b} arrived before ${minM.b}, which committed before it was sent`);
			} else if (b.i === 1 && pos.get(`${b.k}.${b.t}.0`) > j) {
				ooo++;
				if (oooExamples.length < 5) oooExamples.push(`chat ${b.ch}: ${b.b} arrived before ${b.k}.${b.t}.0, sent before it in its transaction`);
			}
			pos.set(`${b.k}.${b.t}.${b.i}`, j);
			if (b.c !== null && b.c < minC) { minC = b.c; minM = b; }
		}
	}
	const by = (list, key) => {
		const counts = {};
		for (const m of list) counts[key(m)] = (counts[key(m)] || 0) + 1;
		return Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
	};
	console.log(`committed ${committed.length} messages (${doubtCommitted} of them settled from in doubt, ${doubtAborted} in doubt did not commit), ` +
		`${messages.length - committed.length} not committed; processed ${lines.length} jobs (${retaken} redelivered by the stalled check)`);
	console.log(`committed by isolation: ${by(committed, (m) => m.iso)}`);
	if (lost.length) {
		console.log(`lost by isolation: ${by(lost, (m) => m.iso)}; by hold before the send: ${by(lost, (m) => m.hold >= 1000 ? '>=1s' : m.hold >= 200 ? '0.2-1s' : '<0.2s')}; ` +
			`by end: ${by(lost, (m) => m.end)}; in a savepoint: ${lost.filter((m) => m.sp !== 'none').length}`);
		// the rotation's states the schedule saw: when the message's generation stopped taking rows and the
		// bound it was closed with (every writer of the generation should have had its xid below it)
		const rotation = fs.existsSync(`${dir}/rotation.jsonl`)
			? fs.readFileSync(`${dir}/rotation.jsonl`, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
		// the rotation's state as last seen before a time (polled: it may lag by up to 50 ms)
		const stateAt = (t) => { let st = null; for (const r of rotation) { if (r.at <= t) st = r; else break; } return st; };
		const parse = (text) => text.replace(/[{}]/g, '').split(',');
		// the close of a lost message's generation: its bound, and whether the generation had been switched away
		// from (as last polled) before the send began, which for REPEATABLE READ and SERIALIZABLE means the send
		// read the current generation with a snapshot older than the switch (a stale read; a READ COMMITTED
		// send reads it with the statement's own snapshot, so a poll that lags is all that can make it look so)
		const closeOf = (m) => {
			const gen = m.gen, st = stateAt(m.s);
			if (gen === undefined || gen === null || !st) return null;
			const stale = st.current !== gen && m.iso !== 'READ COMMITTED';
			const truncated = st.current !== gen && parse(st.empty)[gen] === 't';
			const from = st.current === gen || parse(st.closed)[gen] === 'NULL' ? rotation.find((r) => r.at > st.at && parse(r.closed)[gen] !== 'NULL') : st;
			const bound = from ? parse(from.closed)[gen] : null;
			return { gen, stale, truncated, bound, at: from ? from.at : null, above: bound !== null && BigInt(m.xid) >= BigInt(bound) };
		};
		const generationAtSend = (m) => {
			const k = closeOf(m);
			if (!k) return 'generation unknown';
			if (k.truncated && k.stale) return `generation ${k.gen}, already truncated when the send began (a stale read of the current one)`;
			return `generation ${k.gen}, ${k.stale ? 'no longer current when the send began (a stale read)' : 'current when the send began'}` +
				(k.bound === null ? ', not closed' : `, closed ${k.at > m.s ? `${Math.round(k.at - m.s)} ms after the send began ` : ''}with bound ` +
					`${k.bound} (xid ${m.xid} ${k.above ? 'AT OR ABOVE it' : 'below it'})`);
		};
		// what happened to a lost message's generation, as far as the polled states tell: a stale read, or the
		// close bound (the generation it wrote was closed, while it still ran, with a bound at or below its xid)
		const kind = (m) => {
			const k = closeOf(m);
			if (!k) return 'generation unknown';
			if (k.stale) return 'stale read of the current generation';
			if (k.above) return 'closed at or below its running xid';
			return 'other';
		};
		const kinds = ['stale read of the current generation', 'closed at or below its running xid', 'other', 'generation unknown']
			.map((k) => [k, lost.filter((m) => kind(m) === k)]).filter(([, l]) => l.length)
			.map(([k, l]) => `${k} ${l.length} (${by(l, (m) => m.iso)})`).join('; ');
		console.log(`lost, by kind: ${kinds}`);
		// the other kinds first, then a few stale reads
		const stale = (m) => kind(m) === 'stale read of the current generation';
		for (const m of [...lost.filter((x) => !stale(x)).slice(0, 10), ...lost.filter(stale).slice(0, 6)])
			console.log(`  lost ${m.b}: chat ${m.ch}, ${m.iso}, held ${m.hold} ms before and ${m.after} ms after the send, ${m.end}, xid ${m.xid}, ${generationAtSend(m)}`);
	}
	for (const e of oooExamples) console.log(`  out of order: ${e}`);
	for (const p of phantoms) console.log(`  delivered but not committed: ${p}`);
	for (const x of mismatches) console.log(`  bookkeeping: ${x}`);
	const verdict = `lost ${lost.length}, twice ${twice}, out of order ${ooo}, delivered but not committed ${notCommitted}, ` +
		`unknown ${unknown}, bookkeeping mismatches ${mismatch}`;
	console.log(verdict);
	process.exit(lost.length || twice || ooo || notCommitted || unknown || mismatch ? 1 : 0);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'run') await run(args[0]);
else if (cmd === 'workers') await workers(...args);
else if (cmd === 'check') check(args[0]);
else { console.error('usage: schedules.mjs run <dir> | workers <file> <queue> <max> | check <dir>'); process.exit(2); }
