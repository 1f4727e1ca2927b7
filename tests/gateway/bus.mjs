// tests/gateway/bus.mjs <phase> - any number of gateways per service: a client on any instance is
// shown every message of its chats once, in the inbox's seq order, whichever instance consumed it.
//   spread     three daemons competing on one queue; on each, a Socket.IO client (default
//              transports), a websocket-only Socket.IO client and a /ws client; messages sent
//              through consumers.send_message (the relay); then 20 kB messages (bus notices); then a
//              /ws client of one instance resumes (?since=) on another.
//   interrupt  one consuming daemon and one gateway-only daemon (--consume off) whose bus
//              subscription is killed again and again (CLIENT KILL TYPE pubsub) while messages flow:
//              it fills what it missed from the inbox. Then a row no consumer publishes (written
//              straight into the inbox) reaches both through the quiet-bus check. Then Redis is
//              restarted while messages are sent: all of them reach every client once, in order.
//   haproxy    (run by haproxy.sh) two consuming daemons behind HAProxy with the documented
//              configuration: long-polling clients (pinned by HAProxy's cookie) and default clients
//              spread over both are shown everything once, in order; behind a frontend without
//              stickiness a long-polling client is told it failed (connect_error), it is never
//              connected and silently short of messages.
import pg from 'pg';
import { execFileSync, execSync } from 'node:child_process';
import { Daemon } from '../harness/daemon.mjs';
import { env } from '../harness/check.mjs';
import { check, finish, sleep, sioClient, token, waitFor, wsClient, messagesOf } from './peer_lib.mjs';

const phase = process.argv[2];
const ports = env('BUS_PORTS').split(',').map(Number);
const db = new pg.Client({ connectionString: env('PGURL') });
await db.connect();

const daemon = (i, extra = []) => new Daemon({
	name: `chat-outboxd ${i}`, port: ports[i],
	flags: ['--service', 'workers', '--queue', 'chat-messages', '--identity', `workers-${i}`, ...extra],
});

// Client wraps the kinds behind one shape: kind, chats, and the messages it was shown.
function client(kind, port, chats, since = null) {
	const url = `http://127.0.0.1:${port}`;
	if (kind === 'ws') {
		const w = wsClient(`?token=${token(chats)}${since === null ? '' : `&since=${since}`}`, {}, port);
		return { kind, port, chats, shown: () => messagesOf(w), ready: () => w.frames.length > 0, close: () => w.close() };
	}
	const s = sioClient({ auth: { token: token(chats) }, ...(kind === 'websocket' ? { transports: ['websocket'] } : {}) }, url);
	return { kind, port, chats, shown: () => s.messages, ready: () => s.connected, close: () => s.close() };
}

// viaProxy: a Socket.IO client through HAProxy; withCredentials keeps HAProxy's cookie (Node's
// engine.io-client has a cookie jar only then; a browser on the same origin sends it anyway).
function viaProxy(kind, url, chats) {
	const s = sioClient({ auth: { token: token(chats) }, withCredentials: true, ...(kind === 'polling' ? { transports: ['polling'] } : {}) }, url);
	s.disconnects = [];
	s.on('disconnect', (reason) => s.disconnects.push(reason));
	return { kind: `${kind} via haproxy`, port: new URL(url).port, chats, socket: s, shown: () => s.messages, ready: () => s.connected, close: () => s.close() };
}

// sendAll sends rounds of one message per chat, one transaction per round, a short pause between
// rounds (so the relay pushes many small batches and the competing consumers share them), and returns
// the bodies each chat must show, in order.
async function sendAll(chats, rounds, tag, pad = 0) {
	const want = new Map(chats.map((c) => [c, []]));
	for (let n = 0; n < rounds; n++) {
		await db.query('BEGIN');
		for (const c of chats) {
			const body = `${tag} c${c} n${n}${'x'.repeat(pad)}`;
			await db.query('SELECT consumers.send_message($1, $2)', [c, body]);
			want.get(c).push(body);
		}
		await db.query('COMMIT');
		await sleep(25);
	}
	return want;
}

// checkShown: every client was shown exactly its chats' messages (the bodies sent, want), each once, in
// the inbox's seq order. (Competing consumers may commit one chat's messages in another order than they
// were sent; keeping that order is the partitions' job, not the bus'.)
async function checkShown(what, clients, want) {
	const total = (c) => c.chats.reduce((n, chat) => n + want.get(chat).length, 0);
	await waitFor(`${what}: every client shown everything`, () => clients.every((c) => c.shown().length >= total(c)), 20000);
	await sleep(300); // anything shown twice would have arrived by now
	const inbox = new Map();
	for (const chat of want.keys()) {
		const { rows } = await db.query('SELECT body FROM workers.inbox WHERE chat_id = $1 ORDER BY seq', [chat]);
		inbox.set(chat, rows.map((r) => r.body));
	}
	const sameSet = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
	for (const c of clients) {
		const shown = c.shown();
		const perChat = c.chats.map((chat) => {
			const got = shown.filter((m) => Number(m.chat_id) === chat).map((m) => m.body);
			const ok = JSON.stringify(got) === JSON.stringify(inbox.get(chat)) && sameSet(got, want.get(chat));
			return { chat, ok, got: got.length };
		});
		const seqs = shown.map((m) => Number(m.seq));
		check(`${what}: ${c.kind} client on :${c.port} shown every message of chats ${c.chats} once, in seq order`,
			shown.length === total(c) && perChat.every((p) => p.ok) && seqs.every((s, i) => i === 0 || s > seqs[i - 1]),
			`want ${total(c)}, shown ${shown.length}; per chat ${perChat.map((p) => `${p.chat}:${p.got}${p.ok ? '' : '!'}`).join(' ')}`);
	}
}

if (phase === 'spread') {
	const daemons = [daemon(0), daemon(1), daemon(2)];
	await Promise.all(daemons.map((d) => d.start()));
	const clients = [];
	for (const d of daemons) {
		clients.push(client('default', d.port, [1, 2]), client('websocket', d.port, [2, 3]), client('ws', d.port, [1, 3]));
	}
	await waitFor('clients connected', () => clients.every((c) => c.ready()));
	const want = await sendAll([1, 2, 3], 30, 'spread');
	await checkShown('three gateways', clients, want);
	// Bodies over the bus' row bound travel as notices: every other gateway reads them from the inbox.
	const big = await sendAll([1, 2, 3], 3, 'big', 20000);
	for (const chat of [1, 2, 3]) want.get(chat).push(...big.get(chat));
	await checkShown('20 kB messages', clients, want);
	const fillRows = (await Promise.all(daemons.map((d) => d.metric('chat_outboxd_bus_fill_rows_total')))).reduce((a, b) => a + b, 0);
	// (a gateway may also get one from its own consumer, which hands on other writers' rows)
	check('gateways read 20 kB messages from the inbox', fillRows > 0, `${fillRows} rows read`);

	// Resuming on another instance: a /ws client of the first one comes back to the third from the seq of
	// the 10th message it was shown, and gets the rest, once, in order.
	const first = clients[2].shown();
	const resumed = client('ws', daemons[2].port, [1, 3], Number(first[9].seq));
	await waitFor('the resumed client to catch up', () => resumed.shown().length >= first.length - 10);
	await sleep(300);
	check('a /ws client resumes on another instance with everything after its seq, once, in order',
		JSON.stringify(resumed.shown().map((m) => m.id)) === JSON.stringify(first.slice(10).map((m) => m.id)),
		`${resumed.shown().length} of ${first.length - 10}`);
	resumed.close();
	for (const c of clients) c.close();
	await Promise.all(daemons.map((d) => d.stop()));
} else if (phase === 'interrupt') {
	const consumer = daemon(0);
	const gateway = daemon(1, ['--consume', 'off']);
	await Promise.all([consumer.start(), gateway.start()]);
	let health = {};
	await waitFor('the gateway-only instance healthy', async () => {
		health = await (await fetch(`http://127.0.0.1:${gateway.port}/healthz`)).json();
		return health.status === 'ok' && health.redis_appendfsync !== null;
	});
	check('a gateway-only instance reports its bus subscription, Postgres and Redis\' settings in /healthz',
		health.status === 'ok' && health.redis === true && health.postgres === true && health.redis_appendfsync === 'everysec',
		JSON.stringify(health));
	const clients = [client('websocket', gateway.port, [1, 2]), client('ws', gateway.port, [1, 2]),
		client('websocket', consumer.port, [1, 2])];
	await waitFor('clients connected', () => clients.every((c) => c.ready()));
	let killing = true;
	let kills = 0;
	const killer = (async () => {
		while (killing) {
			execFileSync('redis-cli', ['-p', env('REDIS_PORT'), 'CLIENT', 'KILL', 'TYPE', 'pubsub']);
			kills++;
			await sleep(30);
		}
	})();
	const want = await sendAll([1, 2], 40, 'interrupt');
	killing = false;
	await killer;
	await checkShown(`bus killed ${kills} times`, clients, want);
	check('the gateway-only instance filled gaps from the inbox', (await gateway.metric('chat_outboxd_bus_fills_total')) > 0);

	// A row no consumer hands to its gateway: written into the inbox directly. Only the quiet-bus
	// check finds it, on both instances.
	const before = clients.map((c) => c.shown().length);
	await db.query("INSERT INTO workers.inbox (message_id, chat_id, body, created_at) VALUES (gen_random_uuid(), 1, 'quiet', now())");
	want.get(1).push('quiet');
	await checkShown('a row nobody published', clients, want);
	check('it was not shown twice', clients.every((c, i) => c.shown().length === before[i] + 1));

	// Redis restarted while messages are sent: they wait in the outbox, then flow while the
	// subscriptions come back; whatever a gateway's bus missed meanwhile it reads from the inbox.
	execFileSync('redis-cli', ['-p', env('REDIS_PORT'), 'shutdown']);
	const more = await sendAll([1, 2], 10, 'restart');
	execSync(env('REDIS_START'));
	for (const chat of [1, 2]) want.get(chat).push(...more.get(chat));
	await checkShown('Redis restarted', clients, want);
	check('both subscriptions came back', (await gateway.metric('chat_outboxd_bus_subscribed')) === 1 &&
		(await consumer.metric('chat_outboxd_bus_subscribed')) === 1);
	for (const c of clients) c.close();
	await Promise.all([consumer.stop(), gateway.stop()]);
} else if (phase === 'haproxy') {
	const daemons = [daemon(0), daemon(1)];
	await Promise.all(daemons.map((d) => d.start()));
	const sticky = env('STICKY_URL');
	// HAProxy marks an instance up after its check passes; its cookie on a /healthz answer names the
	// instance that answered.
	const seen = new Set();
	await waitFor('haproxy to route to both instances', async () => {
		const r = await fetch(`${sticky}/healthz`);
		if (r.status === 200) seen.add(/CHATGW=(\w+)/.exec(r.headers.get('set-cookie') || '')?.[1]);
		return seen.has('gw1') && seen.has('gw2');
	}, 15000, 100);
	const clients = [];
	for (let i = 0; i < 6; i++) clients.push(viaProxy('polling', sticky, [1, 2]));
	for (let i = 0; i < 2; i++) clients.push(viaProxy('default', sticky, [1, 2]));
	await waitFor('clients connected through haproxy', () => clients.every((c) => c.ready()), 15000);
	const spread = await Promise.all(daemons.map((d) => d.metric('chat_outboxd_clients_connected')));
	check('haproxy spread the clients over both instances', spread.every((n) => n > 0), spread.join(' + '));
	const want = await sendAll([1, 2], 20, 'haproxy');
	await checkShown('sticky haproxy', clients, want);
	check('no client through haproxy was disconnected', clients.every((c) => c.socket.disconnects.length === 0),
		clients.map((c) => c.socket.disconnects.join('/')).join(' '));
	for (const c of clients) c.close();

	const lost = viaProxy('polling', env('PLAIN_URL'), [1, 2]);
	const told = await waitFor('a polling client without stickiness to be told', () => lost.socket.errors.length > 0 || lost.socket.disconnects.length > 0, 15000);
	check('without stickiness a long-polling client gets an error, not a silent session',
		told && !lost.socket.connected, `errors: ${lost.socket.errors.map((e) => e.message).join('; ')} disconnects: ${lost.socket.disconnects.join('; ')}`);
	lost.close();
	await Promise.all(daemons.map((d) => d.stop()));
} else {
	throw new Error(`unknown phase ${phase}`);
}
await db.end();
finish();
