// tests/ha/traffic.mjs - the traffic of the HA suites (redis_failover.mjs, sentinel_switch.mjs), set up
// once: one direction of procs.mjs's DIRECTIONS is its receiving chat-outboxd, a sender (sender.mjs, a
// process of its own calling <service>.send_message) and the clients that count what they are shown.
//   const side = await startDirection({ direction, port, chat, kinds })
//     direction  'consumers->workers' or 'workers->consumers'
//     kinds      the client kinds, each one client: 'socket.io' (the real socket.io-client, procs.mjs's
//                watcher) and '/ws' (plain WebSocket, resuming with ?since= the highest seq it was shown)
//   side.send(n)           one send; resolves with the message id once committed (side.saved: n -> id)
//   side.shownUpTo(n)      every committed send up to n is shown on every client
//   await side.verdict()   { failures, lines, counts }: per client lost / shown twice / out of order (verdict.mjs;
//                          counts: one { client, lost, twice, reordered } per client), and for the direction
//                          stored twice (the receiver's inbox) and unsent (the outbox)
//   await side.stop()      clients closed, sender and daemon stopped (SIGTERM, exit 0)
import { receivingDaemon, Sender, watcher, postgres, DIRECTIONS, waitUntil } from '../faults/procs.mjs';
import { resumingWs } from '../harness/ws_client.mjs';
import { token } from '../harness/jwt.mjs';
import { shownOnce } from './verdict.mjs';

function socketIoClient(port, chat, name) {
	const w = watcher({ port, chats: [chat], name });
	return { kind: 'socket.io', name, seen: w.seen, connected: () => w.socket.connected, close: () => w.socket.close() };
}

function wsClient(port, chat, name) {
	const seen = [];
	let since = 0;
	const t = token([chat], { sub: name });
	const ws = resumingWs(() => `ws://127.0.0.1:${port}/ws?token=${t}&since=${since}`, (f) => {
		if (f.type !== 'message') return;
		seen.push({ ...f.message, at: Date.now() });
		since = Math.max(since, Number(f.message.seq));
	});
	return { kind: '/ws', name, seen, connected: ws.connected, close: ws.close };
}

const CLIENTS = { 'socket.io': socketIoClient, '/ws': wsClient };

export async function startDirection({ direction, port, chat, kinds = ['socket.io'] }) {
	const d = DIRECTIONS[direction];
	const saved = new Map(); // n -> id
	const byId = new Map();
	const daemon = receivingDaemon({ service: d.receiver, queue: d.queue, port });
	await daemon.start();
	const clients = kinds.map((kind) => CLIENTS[kind](port, chat, `${d.receiver} ${kind}`));
	await waitUntil(`${direction}: the clients to connect`, () => clients.every((c) => c.connected()), 10000);
	const sender = new Sender({ service: d.sender, chat, onSaved: (n, id) => { saved.set(n, id); byId.set(id, n); } });
	await sender.start();
	const shown = (c, id) => c.seen.some((m) => m.id === id);
	return {
		name: direction, ...d, chat, daemon, sender, clients, saved, byId,
		send: (n) => sender.send(n),
		shownUpTo: (n) => [...saved.entries()].every(([k, id]) => k > n || clients.every((c) => shown(c, id))),
		async verdict() {
			const failures = [];
			const lines = [];
			const counts = [];
			for (const c of clients) {
				const v = shownOnce({ saved, byId, seen: c.seen });
				counts.push({ client: c.kind, ...v.counts });
				lines.push(`${direction} ${c.kind}: ${v.text}`);
				failures.push(...v.failures.map((f) => `${direction} ${c.kind}: ${f}`));
			}
			const [{ stored, twice }] = await postgres.query(`SELECT count(*)::int AS stored, (count(*) - count(DISTINCT message_id))::int AS twice
				FROM ${d.receiver}.inbox WHERE chat_id = $1 AND target IS NULL`, [chat]);
			const [{ unsent }] = await postgres.query(`SELECT count(*)::int AS unsent FROM ${d.sender}.outbox WHERE sent_at IS NULL`);
			lines.push(`${direction}: saved ${saved.size}, stored ${stored} (${twice} twice), unsent ${unsent}, ` +
				`duplicate jobs skipped by the inbox ${daemon.duplicates}`);
			if (twice) failures.push(`${direction}: ${twice} stored twice`);
			if (stored !== saved.size + twice) failures.push(`${direction}: ${stored} stored of ${saved.size} saved`);
			if (unsent) failures.push(`${direction}: ${unsent} rows unsent`);
			return { failures, lines, counts };
		},
		async stop() {
			for (const c of clients) c.close();
			await sender.stop();
			await daemon.stop('SIGTERM');
		},
	};
}
