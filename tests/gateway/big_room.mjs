// tests/gateway/big_room.mjs - presence and typing of a big chat (docs/client-protocol.md "Presence"), with real
// socket.io-client and /ws peers against one daemon started with --presence-threshold 20 --presence-interval 500:
//  - a join storm of 150 users into one chat: each socket receives at most one presence frame per interval (plus
//    a small chat's burst while the chat was small), not one per join; the last frame each socket gets carries the
//    final online count;
//  - chat_state of a big chat: the online count and at most --presence-threshold users, with users_next;
//  - the paged `presence` request: every present user exactly once, in order, pages of at most `limit`; a client
//    asking in a loop is rate-limited;
//  - a leave storm: the same bound, the count coming down to what stays;
//  - typing in the big chat: coalesced into at most one `typing {users}` frame per interval;
//  - /ws clients get the same frames.
import { PORT, check, finish, sioClient, wsClient, token, waitFor, sleep } from './peer_lib.mjs';

const CHAT = 9, N = 150, BATCH = 50, THRESHOLD = 20, INTERVAL = 500, BURST = 8;
const frames = new Map(); // client -> [{at, event, data}]
const record = (c, event, data) => frames.get(c).push({ at: Date.now(), event, data });

function member(i) {
	const s = sioClient({ transports: ['websocket'], auth: { token: token([CHAT], { sub: `m${String(i).padStart(4, '0')}`, name: `M ${i}` }) } });
	frames.set(s, []);
	for (const e of ['presence', 'typing', 'chat_state']) s.on(e, (d) => record(s, e, d));
	s.ask = (event, arg) => s.timeout(10000).emitWithAck(event, arg);
	return s;
}

const start = Date.now();
const clients = [];
for (let i = 0; i < N; i += BATCH) {
	const batch = Array.from({ length: BATCH }, (_, k) => member(i + k));
	clients.push(...batch);
	await waitFor(`batch ${i / BATCH + 1} connected`, () => batch.every((c) => c.connected), 30000);
}
// two /ws clients watch too
const ws = [0, 1].map((k) => wsClient(`?token=${token([CHAT], { sub: `w${k}` })}`));
const all = N + 2;
const last = (c) => frames.get(c).filter((f) => f.event === 'presence').at(-1)?.data;
await waitFor('every socket told the final count', () => clients.every((c) => last(c)?.online === all), 30000);
const stormMs = Date.now() - start;
const intervals = Math.ceil(stormMs / INTERVAL) + 1;
const presenceFrames = clients.map((c) => frames.get(c).filter((f) => f.event === 'presence').length);
const worst = Math.max(...presenceFrames);
check(`join storm: at most one presence frame per interval (+ a burst of ${BURST}) per socket: ${intervals} intervals`,
	worst <= intervals + BURST, `max ${worst} frames over ${stormMs} ms`);
check('join storm: far fewer presence frames than joins', worst < N / 3, `max ${worst} for ${N} joins`);
const big = frames.get(clients[0]).find((f) => f.event === 'presence' && f.data.online > THRESHOLD && f.data.joined);
check('a big chat\'s frame: online, joined (at most 20), left, more',
	big && Array.isArray(big.data.joined) && big.data.joined.length <= 20 && Array.isArray(big.data.left) && typeof big.data.more === 'boolean',
	JSON.stringify(big?.data).slice(0, 300));

// chat_state of a late joiner: the count and one page
const late = member(9999);
await waitFor('the late joiner\'s chat_state', () => frames.get(late).some((f) => f.event === 'chat_state'));
const state = frames.get(late).find((f) => f.event === 'chat_state').data;
check('chat_state of a big chat: online count, at most --presence-threshold users, users_next',
	state.online === all + 1 && state.users.length === THRESHOLD && typeof state.users_next === 'string',
	JSON.stringify({ online: state.online, users: state.users.length, next: state.users_next }));

// the paged list: everyone once, in order
const seen = [];
let after = null, pages = 0, biggest = 0;
for (;;) {
	const page = await late.ask('presence', { chat_id: CHAT, after, limit: 40 });
	if (!page.ok) { await sleep(page.error?.retry_after_ms ?? 200); continue; }
	pages++;
	biggest = Math.max(biggest, page.users.length);
	seen.push(...page.users.map((u) => u.sub));
	if (page.next === null) break;
	after = page.next;
}
const want = [...clients.map((_, i) => `m${String(i).padStart(4, '0')}`), 'm9999', 'w0', 'w1'].sort();
check('presence pages: every present user once, sorted', JSON.stringify(seen) === JSON.stringify(want), `${seen.length} users in ${pages} pages`);
check('presence pages: at most limit users each', biggest <= 40, `${biggest}`);
const loop = await Promise.all(Array.from({ length: 30 }, () => late.ask('presence', { chat_id: CHAT })));
check('presence asked in a loop is rate-limited', loop.some((r) => r.error?.code === 'rate_limited'), JSON.stringify(loop.at(-1)).slice(0, 200));
const wsPage = await ws[0].ask({ type: 'presence', chat_id: CHAT, limit: 5 });
check('/ws presence page', wsPage.type === 'ack' && wsPage.users.length === 5 && wsPage.online === all + 1 && typeof wsPage.next === 'string',
	JSON.stringify(wsPage).slice(0, 200));
const wsPresence = ws[0].frames.filter((f) => f.type === 'presence');
check('/ws clients get the coalesced frames too', wsPresence.some((f) => Array.isArray(f.joined)) && wsPresence.length <= intervals + BURST,
	`${wsPresence.length} presence frames`);

// typing storm: 40 typists in one interval reach each socket as at most a frame or two
const watcher = clients[N - 1];
const typingBefore = frames.get(watcher).filter((f) => f.event === 'typing').length;
const typingStart = Date.now();
await Promise.all(clients.slice(0, 40).map((c) => c.ask('typing', { chat_id: CHAT, typing: true })));
await waitFor('the coalesced typing frame', () => frames.get(watcher).filter((f) => f.event === 'typing').length > typingBefore, 5000);
await sleep(INTERVAL * 2);
const typingFrames = frames.get(watcher).filter((f) => f.event === 'typing').slice(typingBefore);
const typingIntervals = Math.ceil((Date.now() - typingStart) / INTERVAL) + 1;
check('typing in a big chat: coalesced, at most one frame per interval', typingFrames.length <= typingIntervals &&
	typingFrames.every((f) => Array.isArray(f.data.users) && f.data.users.length <= 20),
	`${typingFrames.length} frames: ${JSON.stringify(typingFrames.map((f) => f.data.users.length))}`);
check('typing frames name the typists', typingFrames.flatMap((f) => f.data.users).every((u) => u.typing === true && /^m\d{4}$/.test(u.user.sub)));

// leave storm: 100 go at once
const stay = clients.slice(100);
for (const c of stay) frames.set(c, []);
const leaveStart = Date.now();
for (const c of clients.slice(0, 100)) c.close();
const remaining = all + 1 - 100;
await waitFor('every staying socket told the count after the leave storm', () => stay.every((c) => last(c)?.online === remaining), 30000);
const leaveIntervals = Math.ceil((Date.now() - leaveStart) / INTERVAL) + 1;
const leaveWorst = Math.max(...stay.map((c) => frames.get(c).filter((f) => f.event === 'presence').length));
check('leave storm: at most one presence frame per interval per socket', leaveWorst <= leaveIntervals, `max ${leaveWorst} over ${leaveIntervals} intervals`);

for (const c of [...stay, late]) c.close();
for (const w of ws) w.close();
finish();
