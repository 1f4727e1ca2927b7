// tests/gateway/shutdown_peer.mjs - two clients (Socket.IO and /ws) wait for the daemon's SIGTERM and
// check how they were let go: a transport close (Socket.IO reason "transport close"; /ws 1001).
import { check, finish, sioClient, token, waitFor, wsClient } from './peer_lib.mjs';

const s = sioClient({ transports: ['websocket'], auth: { token: token([1]) } });
let reason = null;
s.on('disconnect', (r) => { reason = r; });
const w = wsClient(`?token=${token([1])}`);
await waitFor('both connected', () => s.connected && w.frames.length > 0);
await waitFor('shutdown', () => reason !== null && w.closed !== null, 60000);
check('Socket.IO client sees a transport close (so it reconnects)', reason === 'transport close', String(reason));
check('/ws client gets close 1001 going away', w.closed?.code === 1001, JSON.stringify(w.closed));
finish();
