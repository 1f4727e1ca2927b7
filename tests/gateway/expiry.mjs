// tests/gateway/expiry.mjs - a token is a grant until its exp, and a session must join in time:
//   - a Socket.IO client whose token expires is told "io server disconnect" (no automatic
//     reconnect with the stale token), and a /ws client is closed with 4401;
//   - a client with a longer token stays connected meanwhile;
//   - an Engine.IO session that never sends its namespace CONNECT is closed (--connect-timeout).
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
finish();
