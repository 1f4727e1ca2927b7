// tests/faults/soak_lib.mjs - what the topologies of the chaos soak share (soak.mjs, scaled.mjs, soak_ha.mjs):
// option parsing, the seeded random streams, the senders (the traffic mix) and what a client was shown.
import pg from 'pg';
import { env, sleep } from './procs.mjs';

const argv = process.argv;
export const opt = (name, def) => (argv.includes(`--${name}`) ? Number(argv[argv.lastIndexOf(`--${name}`) + 1]) : def); // last one wins
export const flag = (name) => argv.includes(`--${name}`);
export const optString = (name, def) => (argv.includes(`--${name}`) ? argv[argv.lastIndexOf(`--${name}`) + 1] : def);

// silenceSpan: the longest time a client was shown nothing around a fault, in ms, and where it lay.
// arrivals are the times (ascending) it was shown a message; the fault struck at `from` and the
// topology was whole again at `to`. The silence runs from the last arrival before `from` (or `from`)
// through every arrival up to the first one after `to`: { ms, start, end } of the longest pause (start
// = the arrival before it, or `from`; end = the arrival that ended it); null when nothing arrived
// after `to` (the client never caught up). This is the gap a user feels: the last message shown
// before the fault to the first one after, or a later pause if one was longer.
export function silenceSpan(arrivals, from, to) {
	let i = 0;
	while (i < arrivals.length && arrivals[i] < from) i++;
	let prev = i > 0 ? arrivals[i - 1] : from;
	let longest = null;
	for (; i < arrivals.length; i++) {
		if (!longest || arrivals[i] - prev > longest.ms) longest = { ms: arrivals[i] - prev, start: prev, end: arrivals[i] };
		prev = arrivals[i];
		if (arrivals[i] > to) return longest;
	}
	return null;
}

// gapTable: per fault, per client kind, the gap of every round and the largest, from rows
// { fault, kind, ms } (ms Infinity: never caught up), in the order faults and kinds first came.
export function gapTable(rows) {
	const table = new Map();
	for (const { fault, kind, ms } of rows) {
		if (!table.has(fault)) table.set(fault, new Map());
		const byKind = table.get(fault);
		if (!byKind.has(kind)) byKind.set(kind, { rounds: [], max: -1 });
		const g = byKind.get(kind);
		g.rounds.push(ms);
		g.max = Math.max(g.max, ms);
	}
	return table;
}

// gapBounds: --max-gap's "key=seconds,key=seconds" as a Map key -> ms (a fault over its bound fails the
// soak); '' gives none. A bad element throws, naming it.
export function gapBounds(text) {
	const bounds = new Map();
	for (const part of text.split(',').filter(Boolean)) {
		const m = /^([a-z-]+)=(\d+(?:\.\d+)?)$/.exec(part.trim());
		if (!m) throw new Error(`--max-gap: "${part}" is not key=seconds`);
		bounds.set(m[1], Math.round(Number(m[2]) * 1000));
	}
	return bounds;
}

// Shown: what one client was shown, counted the same way by every topology. Messages are counted by
// id and checked per chat against their bodies ("c<chat> #<k>", as chatSender sends them: k rises);
// edits and deletes (message_edited / message_deleted, id = the message's) by the seq of their event,
// and one shown before its message is out of order. Every event (message or change) is also checked in
// seq order. A message shown again is counted as twice, not as out of order.
export class Shown {
	constructor() {
		this.seen = new Map();    // message id -> times shown
		this.changes = new Map(); // message id -> (event seq -> times shown)
		this.perChat = new Map(); // chat -> highest k shown
		this.lastSeq = 0;         // highest seq shown (where the client resumes from)
		this.chatOrder = 0;       // per chat: a lower k after a higher one, or a change before its message
		this.seqOrder = 0;        // a seq not above the previous event's
		this.arrivals = [];       // when each event was shown (ms), for the gaps around faults
	}
	#seq(seq) {
		const n = Number(seq);
		if (n <= this.lastSeq) this.seqOrder++;
		this.lastSeq = Math.max(this.lastSeq, n);
	}
	message(m) {
		this.arrivals.push(Date.now());
		const n = (this.seen.get(m.id) ?? 0) + 1;
		this.seen.set(m.id, n);
		if (n > 1) return;
		this.#seq(m.seq);
		// shown already edited ("… edited") or deleted (no body): its k still says where it belongs
		const [, chat, k] = /^c(\d+) #(\d+)( edited)?$/.exec(m.body ?? '') || [];
		if (chat === undefined) return;
		const prev = this.perChat.get(chat) ?? -1;
		if (Number(k) <= prev) this.chatOrder++;
		this.perChat.set(chat, Math.max(prev, Number(k)));
	}
	change(e) {
		this.arrivals.push(Date.now());
		const seqs = this.changes.get(e.id) ?? new Map();
		const n = (seqs.get(e.seq) ?? 0) + 1;
		seqs.set(e.seq, n);
		this.changes.set(e.id, seqs);
		if (n > 1) return;
		if (!this.seen.has(e.id)) this.chatOrder++;
		this.#seq(e.seq);
	}
	// missing: what of truth ({id, version}: version = the message's edits and delete, as Postgres
	// committed them) was not shown: a message and each of its changes count one each.
	missing(truth) {
		let n = 0;
		for (const m of truth) n += (this.seen.has(m.id) ? 0 : 1) + Math.max(0, (m.version ?? 0) - (this.changes.get(m.id)?.size ?? 0));
		return n;
	}
	// twice: messages and change events shown more than once.
	twice() {
		let n = [...this.seen.values()].filter((v) => v > 1).length;
		for (const seqs of this.changes.values()) n += [...seqs.values()].filter((v) => v > 1).length;
		return n;
	}
	// listen: a Socket.IO client's events, or (frame) a /ws frame, into this tally.
	listen(socket) {
		socket.on('message', (m) => this.message(m));
		socket.on('message_edited', (e) => this.change(e));
		socket.on('message_deleted', (e) => this.change(e));
	}
	frame(f) {
		if (f.type === 'message') this.message(f.message);
		else if (f.type === 'message_edited' || f.type === 'message_deleted') this.change(f.message);
	}
}

// mulberry32: small, seedable, good enough to pick faults and pauses. The fault schedule has its own
// stream, so the senders' random pacing cannot shift it: the same seed replays the same faults.
export const mulberry32 = (seed32) => {
	let state = seed32 >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
};
export const between = (lo, hi, r) => lo + Math.floor(r() * (hi - lo + 1));

// chatSender: one loop per chat, so a chat's send order is its commit order (and its outbox order).
// Bodies are "c<chat> #<k>"; k moves on even when the outcome is unknown (connection lost at COMMIT):
// bodies stay unique and ordered, and Postgres is the truth of what was sent. Runs while
// state.sending; counts state.ok / state.failed (and state.changes). This is the one traffic mix of
// the soaks: with changes, after a send the loop also edits (1 in 8) or deletes (1 in 25) the message
// it just sent, through the same outbox: each change is one more event the receivers must show once,
// after its message (Postgres counts them in messages.version; Shown counts what a client saw).
// connect: how to open the sender's connection (default: PGURL); onSent(id): each acknowledged send.
export async function chatSender(service, chat, state, pace, { changes = false, connect, onSent } = {}) {
	const open = connect ?? (async () => {
		const db = new pg.Client({ connectionString: env('PGURL') });
		db.on('error', () => {});
		await db.connect();
		return db;
	});
	let k = 0;
	let db = null;
	while (state.sending) {
		try {
			db ??= await open();
			const body = `c${chat} #${k++}`;
			const { rows: [{ id }] } = await db.query(`SELECT id::text FROM ${service}.send_message($1, $2)`, [chat, body]);
			state.ok++;
			onSent?.(id);
			const roll = changes ? pace() : 1;
			if (roll < 0.04) {
				await db.query(`SELECT id FROM ${service}.delete_message($1)`, [id]);
				state.changes = (state.changes ?? 0) + 1;
			} else if (roll < 0.04 + 0.125) {
				await db.query(`SELECT id FROM ${service}.edit_message($1, $2)`, [id, `${body} edited`]);
				state.changes = (state.changes ?? 0) + 1;
			}
		} catch {
			state.failed++;
			db?.end().catch(() => {});
			db = null;
			await sleep(100);
		}
		await sleep(between(20, 120, pace));
	}
	await db?.end().catch(() => {});
}

// faultSchedule: until 3 s before the deadline, every 1.5-4 s one fault picked at random from
// `kinds` (name -> async function), counted in `counts`; a fault that throws is logged, not fatal.
export async function faultSchedule(kinds, deadline, rand, counts, say) {
	while (Date.now() < deadline - 3000) {
		await sleep(between(1500, 4000, rand));
		const names = Object.keys(kinds);
		const kind = names[Math.floor(rand() * names.length)];
		counts[kind] = (counts[kind] ?? 0) + 1;
		try {
			await kinds[kind]();
		} catch (e) {
			say(`fault ${kind} could not be injected cleanly: ${e.message}`);
		}
	}
}
