// tests/faults/soak_lib.mjs - what the topologies of the chaos soak share (soak.mjs, scaled.mjs, soak_ha.mjs):
// option parsing, the seeded random streams, and the senders.
import pg from 'pg';
import { env, sleep } from './procs.mjs';

const argv = process.argv;
export const opt = (name, def) => (argv.includes(`--${name}`) ? Number(argv[argv.lastIndexOf(`--${name}`) + 1]) : def); // last one wins
export const flag = (name) => argv.includes(`--${name}`);
export const optString = (name, def) => (argv.includes(`--${name}`) ? argv[argv.lastIndexOf(`--${name}`) + 1] : def);

// longestSilence: how long a client was shown nothing around a fault, in ms. arrivals are the times
// (ascending) it was shown a message; the fault began at `from` and the topology was whole again at
// `to`. The silence runs from the last arrival before `from` (or `from`) through every arrival up to
// the first one after `to`; null when nothing arrived after `to` (the client never caught up).
export function longestSilence(arrivals, from, to) {
	let i = 0;
	while (i < arrivals.length && arrivals[i] < from) i++;
	let prev = i > 0 ? arrivals[i - 1] : from;
	let longest = 0;
	for (; i < arrivals.length; i++) {
		longest = Math.max(longest, arrivals[i] - prev);
		prev = arrivals[i];
		if (arrivals[i] > to) return longest;
	}
	return null;
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
// state.sending; counts state.ok / state.failed. With changes, after a send the loop also edits
// (1 in 8) or deletes (1 in 25) the message it just sent, through the same outbox: each change is
// one more event the receivers must show once, after its message (Postgres counts them in
// messages.version).
export async function chatSender(service, chat, state, pace, { changes = false } = {}) {
	let k = 0;
	let db = null;
	while (state.sending) {
		try {
			if (!db) {
				db = new pg.Client({ connectionString: env('PGURL') });
				db.on('error', () => {});
				await db.connect();
			}
			const body = `c${chat} #${k++}`;
			const { rows: [{ id }] } = await db.query(`SELECT id FROM ${service}.send_message($1, $2)`, [chat, body]);
			state.ok++;
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
