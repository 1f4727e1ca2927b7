// tests/gateway/cut_sends.mjs - sends through a network that cuts them (docs/client-protocol.md,
// "Client message ids"): a Consumers user sends through tests/gateway/cut_proxy.mjs, which cuts the
// connection at each point of a send (before the request reaches the gateway, right after it, after
// the commit, before the ack), by dropping it or by stalling it, on Socket.IO (a real
// socket.io-client) and on /ws (a real ws client). Each client does what an app does: when the
// connection drops, or no answer came within its timeout, it opens a new connection and sends again
// with the same client_msg_id, until it has an ack. Counted over every message: stored once
// (consumers.messages, one outbox event), shown once to a Workers client on the other side, and its
// final ack naming the stored message (same id, its client_msg_id). Its argument is how many rounds of
// every point, mode and protocol (16 cuts a round): the default set runs 2, the long label 25 (400 cuts).
// A control after them: two sends cut after their commit and sent again without a key are stored twice.
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { io } from 'socket.io-client';
import { receivingDaemon, postgres, env } from '../faults/procs.mjs';
import { check, finish, sleep, waitFor, waitUntil } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';
import { connected, recordingClient } from './sides_lib.mjs';
import { CutProxy, MODES, POINTS } from './cut_proxy.mjs';

const CHAT = 77;
const ROUNDS = Number(process.argv[2] ?? 2);
// how long a client waits for a connection or an answer before it gives the connection up
const ATTEMPT_MS = 1500;
const workers = receivingDaemon({ service: 'workers', queue: 'chat-messages', port: Number(env('WORKERS_PORT')) });
const consumers = receivingDaemon({ service: 'consumers', queue: 'chat-replies', port: Number(env('CONSUMERS_PORT')) });
const senderToken = token([CHAT], { sub: 'cathy' });

// committed: whether the message whose body holds marker is in consumers.messages (as another
// transaction sees it)
const committed = async (marker) => {
	for (;;) {
		const rows = await postgres.query('SELECT 1 FROM consumers.messages WHERE chat_id = $1 AND strpos(body, $2) > 0', [CHAT, marker]);
		if (rows.length) return true;
		await sleep(10);
	}
};

// One attempt of a send on a new connection: the ack, or null when the connection dropped or no
// answer came within ATTEMPT_MS (the connection is then given up). A refusal ends the test.
async function sioAttempt(port, frame) {
	const s = io(`http://127.0.0.1:${port}`, { auth: { token: senderToken }, transports: ['websocket'], reconnection: false, forceNew: true });
	try {
		const up = await waitFor('socket.io connect', () => s.connected, ATTEMPT_MS, 5);
		if (!up) return null;
		const dropped = new Promise((r) => s.once('disconnect', () => r(null)));
		return await Promise.race([s.timeout(ATTEMPT_MS).emitWithAck('send', frame).catch(() => null), dropped]);
	} finally {
		s.disconnect();
	}
}

async function wsAttempt(port, frame) {
	const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${senderToken}`);
	ws.on('error', () => {});
	try {
		return await new Promise((resolve) => {
			const timer = setTimeout(() => resolve(null), ATTEMPT_MS * 2);
			ws.on('close', () => resolve(null));
			ws.on('open', () => ws.send(JSON.stringify({ type: 'send', ref: 1, ...frame })));
			ws.on('message', (data) => {
				const f = JSON.parse(data.toString());
				if (f.ref !== 1) return;
				clearTimeout(timer);
				resolve(f.type === 'ack' ? { ok: true, message: f.message, repeat: f.repeat === true } : { ok: false, error: f.error });
			});
		});
	} finally {
		ws.terminate();
	}
}

const attempt = { socketio: sioAttempt, ws: wsAttempt };

// sendUntilAcked: the first attempt armed to be cut, then attempts until one is acked (without a
// key when key is null: the control, which shows that the cuts do store messages twice)
async function sendUntilAcked(proxy, protocol, point, mode, key, body, marker = key) {
	const frame = { chat_id: CHAT, body, ...(key ? { client_msg_id: key } : {}) };
	const cut = proxy.arm(marker, point, mode);
	let attempts = 0;
	for (;;) {
		attempts++;
		const answer = await attempt[protocol](proxy.port, frame);
		if (answer && !answer.ok) throw new Error(`${protocol} send of ${key} refused: ${JSON.stringify(answer.error)}`);
		if (answer) {
			await cut; // the armed attempt was cut before any answer got through
			return { answer, attempts };
		}
	}
}

try {
	await Promise.all([workers.start(), consumers.start()]);
	const proxy = new CutProxy({ target: consumers.port, committed });
	await proxy.start();
	const wendy = recordingClient(workers, { sub: 'wendy' }, [CHAT]); // the other side
	await connected(wendy);
	await wendy.ask('join', { chat_id: CHAT });

	const sends = [];
	const started = Date.now();
	for (let round = 0; round < ROUNDS; round++)
		for (const protocol of ['socketio', 'ws'])
			for (const point of POINTS)
				for (const mode of MODES) {
					const key = crypto.randomUUID();
					const body = `cut ${sends.length} ${protocol} ${point} ${mode} ${key}`;
					const { answer, attempts } = await sendUntilAcked(proxy, protocol, point, mode, key, body);
					sends.push({ key, body, protocol, point, mode, answer, attempts });
				}
	// the control: the same cut after the commit, sent again without a key, is stored twice
	const control = [];
	for (const protocol of ['socketio', 'ws']) {
		const marker = `control-${protocol}-${crypto.randomUUID()}`;
		await sendUntilAcked(proxy, protocol, 'commit', 'drop', null, `control ${marker}`, marker);
		control.push(marker);
	}
	const controlRows = await postgres.query('SELECT count(*)::int AS n FROM consumers.messages WHERE chat_id = $1 AND body LIKE $2', [CHAT, 'control %']);
	check('the control: without a client_msg_id each cut send is stored twice', controlRows[0].n === 2 * control.length, JSON.stringify(controlRows));
	await postgres.query("DELETE FROM consumers.messages WHERE chat_id = $1 AND body LIKE 'control %'", [CHAT]);
	for (const k of Object.keys(proxy.cuts)) proxy.cuts[k] -= k === 'commit' ? control.length : 0;

	console.log(`${sends.length} sends, ${Object.values(proxy.cuts).reduce((a, b) => a + b, 0)} cuts ` +
		`(${JSON.stringify(proxy.cuts)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
	check('every armed send was cut once', Object.values(proxy.cuts).every((n) => n === ROUNDS * 4), JSON.stringify(proxy.cuts));

	// stored once: one message per body, one key per message, one outbox event per message
	const stored = await postgres.query(`SELECT m.body, m.id::text, count(*) OVER (PARTITION BY m.body) AS copies,
			(SELECT count(*) FROM consumers.outbox o WHERE o.payload ->> 'id' = m.id::text) AS events,
			(SELECT c.client_msg_id FROM consumers.client_msg_ids c WHERE c.message_id = m.id) AS key
		FROM consumers.messages m WHERE m.chat_id = $1`, [CHAT]);
	const byBody = new Map(stored.map((r) => [r.body, r]));
	const twice = stored.filter((r) => Number(r.copies) !== 1 || Number(r.events) !== 1);
	const lost = sends.filter((s) => !byBody.has(s.body));
	check(`stored once: ${stored.length} messages for ${sends.length} sends, 0 twice, 0 lost`,
		stored.length === sends.length && twice.length === 0 && lost.length === 0,
		JSON.stringify({ twice: twice.slice(0, 3), lost: lost.slice(0, 3).map((s) => s.body) }));
	const wrongAck = sends.filter((s) => {
		const r = byBody.get(s.body);
		return !r || s.answer.message?.id !== r.id || s.answer.message?.client_msg_id !== s.key || r.key !== s.key;
	});
	check('every ack names the stored message and its client_msg_id', wrongAck.length === 0,
		JSON.stringify(wrongAck.slice(0, 3).map((s) => [s.body, s.answer])));
	// a cut after the commit leaves the message stored: the resend is answered as a repeat
	const committedCuts = sends.filter((s) => s.point === 'commit' || s.point === 'ack');
	check('a send cut after its commit is acked as a repeat', committedCuts.every((s) => s.answer.repeat === true),
		JSON.stringify(committedCuts.filter((s) => s.answer.repeat !== true).slice(0, 3).map((s) => s.body)));
	const beforeCuts = sends.filter((s) => s.point === 'before');
	check('a send cut before the gateway is acked as new', beforeCuts.every((s) => s.answer.repeat !== true));

	// shown once on the other side
	const ids = new Set(stored.map((r) => r.id));
	await waitFor('wendy shown every message', () => wendy.of('message').filter((m) => ids.has(m.id)).length >= ids.size, 60000);
	const shown = new Map();
	for (const m of wendy.of('message')) if (ids.has(m.id)) shown.set(m.id, (shown.get(m.id) ?? 0) + 1);
	const shownTwice = [...shown].filter(([, n]) => n !== 1);
	const notShown = [...ids].filter((id) => !shown.has(id));
	check(`shown once on the other side: ${shown.size} of ${ids.size}, 0 twice, 0 missing`,
		shownTwice.length === 0 && notShown.length === 0 && shown.size === ids.size,
		JSON.stringify({ shownTwice: shownTwice.slice(0, 3), notShown: notShown.slice(0, 3) }));
	const resent = sends.reduce((a, s) => a + s.attempts - 1, 0);
	console.log(`stored ${stored.length}, shown ${shown.size}, acked ${sends.length}, ` +
		`repeats acked ${sends.filter((s) => s.answer.repeat).length}, resends ${resent}`);
	wendy.close();
	await proxy.stop();
} catch (e) {
	check('cut_sends ran to the end', false, e.stack);
} finally {
	await Promise.allSettled([workers.stop(), consumers.stop()]);
}
finish();
