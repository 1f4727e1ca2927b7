// tests/gateway/catchup.mjs - connection-state recovery and catch-up from the durable inbox:
// after a disconnect (pid + offset), with auth.since, with no offset yet (seq in the pid), and
// after a daemon restart (phase given by argv[2]). None missed, none twice, in order.
import { writeFileSync, readFileSync } from 'node:fs';
import { check, finish, insertInbox, sioClient, sleep, sql, token, waitFor, wsClient, messagesOf } from './peer_lib.mjs';

const phase = process.argv[2] || 'disconnect';
const state = process.env.H_DIR + '/catchup-state.json';
const inOrderOnce = (msgs, expected) => JSON.stringify(msgs.map((m) => m.body)) === JSON.stringify(expected);

if (phase === 'disconnect') {
	// a client receives live messages, drops, messages arrive meanwhile, it reconnects.
	const s = sioClient({ transports: ['websocket'], auth: { token: token([7]) }, reconnection: true, reconnectionDelay: 200, reconnectionDelayMax: 300 });
	await waitFor('connect', () => s.connected);
	sql(`SELECT consumers.send_message(7, 'live-1')`);
	await waitFor('live-1', () => s.messages.length === 1, 20000);
	check('live message before the drop', s.messages.length === 1 && s.messages[0].body === 'live-1');
	s.io.engine.close(); // transport close: the client reconnects by itself, with {pid, offset}
	insertInbox(7, ['missed-1', 'missed-2', 'missed-3'], 'dave');
	insertInbox(8, ['other-chat']);
	await waitFor('reconnect + replay', () => s.connected && s.messages.length >= 4, 10000);
	sql(`SELECT consumers.send_message(7, 'live-2')`);
	await waitFor('live-2', () => s.messages.length >= 5, 20000);
	await sleep(300);
	check('recovered: missed messages replayed in order, none twice, then live',
		inOrderOnce(s.messages, ['live-1', 'missed-1', 'missed-2', 'missed-3', 'live-2']), s.messages.map((m) => m.body).join());
	check('client reports a recovered connection', s.recovered === true);
	check('replayed messages carry their sender, live ones sent without one null',
		s.messages.slice(1, 4).every((m) => m.sender === 'dave') && s.messages[0].sender === null, JSON.stringify(s.messages));
	const seqs = s.messages.map((m) => m.seq);
	check('seqs strictly increase', seqs.every((v, i) => i === 0 || v > seqs[i - 1]), seqs.join());
	s.close();

	// auth.since: explicit resume point
	const first = Number(s.messages[1].seq);
	const t = sioClient({ transports: ['websocket'], auth: { token: token([7]), since: first } });
	await waitFor('since replay', () => t.messages.length >= 3);
	await sleep(200);
	check('auth.since replays seq > since', inOrderOnce(t.messages, ['missed-2', 'missed-3', 'live-2']), t.messages.map((m) => m.body).join());
	t.close();

	// plain /ws ?since=
	const w = wsClient(`?token=${token([7])}&since=${first}`);
	await waitFor('ws since replay', () => messagesOf(w).length >= 3);
	await sleep(200);
	check('/ws ?since= replays seq > since', inOrderOnce(messagesOf(w), ['missed-2', 'missed-3', 'live-2']), messagesOf(w).map((m) => m.body).join());
	check('/ws replay carries the sender', messagesOf(w)[0]?.sender === 'dave', JSON.stringify(messagesOf(w)[0]));
	check('/ws welcome comes first', w.frames[0].type === 'welcome' && JSON.stringify(w.frames[0].chats) === '[7]');
	w.close();
} else if (phase === 'before-restart') {
	// connects, receives nothing, keeps its pid: the daemon is then restarted under it.
	const s = sioClient({ transports: ['websocket'], auth: { token: token([9]) } });
	await waitFor('connect', () => s.connected);
	const pid = s._pid;
	check('CONNECT reply carries a pid', typeof pid === 'string' && pid.length > 0, String(pid));
	writeFileSync(state, JSON.stringify({ pid }));
	s.close();
} else if (phase === 'after-restart') {
	// A restarted daemon learns the inbox's highest seq from its first read of the inbox (the bus's
	// start) and admits clients only then (healthy), so the first /ws welcome already says to resume
	// from there, not from 0 (which would replay every joined chat from its start).
	const high = Number(sql('SELECT max(seq) FROM workers.inbox'));
	const w = wsClient(`?token=${token([9])}`);
	await waitFor('welcome', () => w.frames.length > 0 || w.closed);
	const welcome = Number(w.frames[0]?.seq ?? -1);
	w.close();
	check('a restarted daemon welcomes /ws clients with the inbox\'s highest seq', welcome === high, `${welcome} vs ${high}`);

	// messages arrived while the daemon was down; the client resumes with only its pid (no offset).
	const { pid } = JSON.parse(readFileSync(state));
	const s = sioClient({ transports: ['websocket'], auth: { token: token([9]), pid } });
	await waitFor('replay', () => s.messages.length >= 2);
	await sleep(300);
	check('after a restart: messages missed while down are replayed from the inbox, in order',
		inOrderOnce(s.messages, ['down-1', 'down-2']), s.messages.map((m) => m.body).join());
	s.close();
} else if (phase === 'search-path') {
	// the daemon runs with search_path = evil, pg_catalog, and evil.to_json(timestamptz) exists.
	const [seq] = insertInbox(9, ['sp-1']);
	const w = wsClient(`?token=${token([9])}&since=${seq - 1}`);
	await waitFor('replay', () => messagesOf(w).length >= 1);
	const m = messagesOf(w)[0];
	check('a replayed message keeps its real created_at under a hostile search_path',
		m?.body === 'sp-1' && /^\d{4}-\d\d-\d\dT/.test(m.created_at), JSON.stringify(m));
	w.send(JSON.stringify({ type: 'send', ref: 1, chat_id: 9, body: 'sp-send' }));
	await waitFor('ack', () => w.frames.some((f) => f.ref === 1));
	const ack = w.frames.find((f) => f.ref === 1);
	check('a send ack keeps its real created_at under a hostile search_path',
		ack?.type === 'ack' && /^\d{4}-\d\d-\d\dT/.test(ack.message?.created_at), JSON.stringify(ack));
	w.close();
}
finish();
