// tests/gateway/expiry.mjs - a token is a grant until its exp, and a session must join in time:
//   - a Socket.IO client whose token expires is told "io server disconnect" (no automatic
//     reconnect with the stale token), and a /ws client is closed with 4401;
//   - a client with a longer token stays connected meanwhile;
//   - an Engine.IO session that never sends its namespace CONNECT is closed (--connect-timeout);
//   - a present client's member expires --presence-ttl (3 s here) ahead and is renewed every third of it.
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { PORT, check, finish, sioClient, wsClient, token, waitFor, sleep } from './peer_lib.mjs';

const exp = Math.floor(Date.now() / 1000) + 2;
// reconnection on: the check below must see that the client does not reconnect by itself
const short = sioClient({ transports: ['websocket'], auth: { token: token([7], { exp }) }, reconnection: true, reconnectionDelay: 100 });
const long = sioClient({ transports: ['websocket'], auth: { token: token([7]) } });
let reason = null;
short.on('disconnect', (r) => { reason = r; });
await waitFor('both connected', () => short.connected && long.connected);
check('connected with a token that expires in 2 s', short.connected);
const w = wsClient(`?token=${token([7], { exp })}`);
await waitFor('/ws welcome', () => w.frames.length > 0);

await waitFor('the short token to expire', () => reason !== null && w.closed !== null, 8000);
check('Socket.IO client disconnected by the server at exp', reason === 'io server disconnect', String(reason));
check('no automatic reconnect with the expired token', (await sleep(1500), !short.connected));
check('/ws client closed with 4401 at exp', w.closed?.code === 4401, JSON.stringify(w.closed));
check('a client with a valid token stays connected', long.connected);
long.close();

// A raw Engine.IO WebSocket session that opens but never joins "/".
const raw = new WebSocket(`ws://127.0.0.1:${PORT}/socket.io/?EIO=4&transport=websocket`);
let rawClosed = null;
const opened = Date.now();
raw.on('close', () => { rawClosed = Date.now() - opened; });
raw.on('message', (d) => { if (d.toString() === '2') raw.send('3'); }); // answers pings, never CONNECTs
raw.on('error', () => {});
await waitFor('the silent session to be closed', () => rawClosed !== null, 8000);
check('a session without CONNECT is closed after --connect-timeout', rawClosed !== null && rawClosed >= 900, `${rawClosed} ms`);
// Presence: the member's score is its expiry, --presence-ttl ahead, renewed every third of it; the
// chat's keys expire twice the ttl after their last change or renewal.
const redisPort = new URL(process.env.REDIS_URL).port;
const rcli = (...a) => execFileSync('redis-cli', ['-p', redisPort, ...a]).toString().trim();
const present = sioClient({ transports: ['websocket'], auth: { token: token([8], { sub: 'pat' }) } });
await waitFor('a present client', () => present.connected);
const key = 'bull:chat_outbox:chat:8:presence';
const expiry = () => Number(rcli('ZRANGE', key, '0', '0', 'WITHSCORES').split('\n')[1]);
await waitFor('its member', () => expiry() > 0);
const first = expiry();
const ahead = first - Date.now();
check('presence: a member expires --presence-ttl ahead', ahead > 1500 && ahead <= 3000, `${ahead} ms ahead`);
const pttl = Number(rcli('PTTL', key));
check('presence: the chat\'s key expires twice the ttl after its change', pttl > 3000 && pttl <= 6000, `${pttl} ms`);
await waitFor('a renewal', () => expiry() > first, 5000);
const renewedAfter = expiry() - first;
// every third of the ttl: 1 s here, so well before the member would have expired (not a timing assertion:
// the renewal must come before the expiry, whatever the load)
check('presence: renewed before it expires', renewedAfter >= 500 && renewedAfter < 3000, `moved ${renewedAfter} ms on`);
present.close();
finish();
