// tests/gateway/sides_lib.mjs - what the two-sides peers (conversation.mjs, edits.mjs) share: a
// Socket.IO client of one daemon that records every event it gets.
import { io } from 'socket.io-client';
import { waitUntil } from '../harness/check.mjs';
import { token } from '../harness/jwt.mjs';

// recordingClient: socket.events [{name, data}] in arrival order, socket.of(name) the data of one
// event, socket.ask(event, arg) an emit with its ack (10 s).
export function recordingClient(daemon, claims, chats) {
	const socket = io(`http://127.0.0.1:${daemon.port}`, { auth: { token: token(chats, claims) }, transports: ['websocket'], reconnectionDelay: 100 });
	socket.events = [];
	socket.onAny((name, data) => socket.events.push({ name, data }));
	socket.of = (name) => socket.events.filter((e) => e.name === name).map((e) => e.data);
	socket.ask = (event, arg) => socket.timeout(10000).emitWithAck(event, arg);
	return socket;
}

export const connected = (s) => waitUntil('socket connected', () => s.connected, 10000, 10);
