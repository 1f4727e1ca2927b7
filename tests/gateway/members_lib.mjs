// tests/gateway/members_lib.mjs - the clients of the --authz membership suites (members.mjs,
// members_bound.mjs): tokens of exactly the claims given, and a Socket.IO client that records its events.
import jwt from 'jsonwebtoken';
import { io } from 'socket.io-client';
import { SECRET } from '../harness/jwt.mjs';

// token: a token of exactly these claims (an undefined one is left out: no chats claim, no sub) for an hour
export const token = (claims) => jwt.sign({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims }, SECRET, { algorithm: 'HS256' });

// client: a Socket.IO client of daemon with a token of claims, recording its events (s.events, s.of(name))
// and asking with a 10 s ack timeout (s.ask)
export const client = (daemon, claims, opts = {}) => {
	const s = io(`http://127.0.0.1:${daemon.port}`, { auth: { token: token(claims) }, transports: ['websocket'], reconnectionDelay: 100, ...opts });
	s.events = [];
	s.onAny((name, data) => s.events.push({ name, data }));
	s.of = (name) => s.events.filter((e) => e.name === name).map((e) => e.data);
	s.ask = (event, arg) => s.timeout(10000).emitWithAck(event, arg);
	return s;
};

// refusal: a connect refusal (asking for chats, when given): resolves with the connect_error's message and reason
export const refusal = (daemon, claims, chats) => new Promise((resolve) => {
	const s = client(daemon, claims, { reconnection: false, ...(chats ? { auth: { token: token(claims), chats } } : {}) });
	s.on('connect_error', (e) => { s.close(); resolve(`${e.message}: ${e.data?.reason}`); });
	s.on('connect', () => { s.close(); resolve('connected'); });
});
