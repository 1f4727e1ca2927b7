// tests/consumer/slow_clients.mjs - clients that stay connected to a daemon that keeps restarting, and
// read slowly: two Socket.IO clients (WebSocket and long-polling) and two /ws clients that resume from
// seq 0 with their socket paused, one reading for a moment once a second, one never (so it is still
// connected when the daemon lets go of its clients, and never learns it was let go). The readers
// reconnect whenever they are let go; the test runs one of these processes per daemon and kills it.
// DAEMON_PORT and the daemons' shared settings (tests/harness/daemon.sh) come from the test; argv[2]
// is the chat they watch.
import { io } from 'socket.io-client';
import WebSocket from 'ws';
import { token as signFor } from '../harness/jwt.mjs';

const port = Number(process.env.DAEMON_PORT);
const chat = Number(process.argv[2] || 7);
const token = () => signFor([chat]);
const url = `http://127.0.0.1:${port}`;

for (const transports of [['websocket'], ['polling']]) {
	// socket.io-client reconnects by itself after a transport close, with its own backoff.
	const s = io(url, { transports, auth: { token: token() }, reconnectionDelay: 100, reconnectionDelayMax: 500 });
	s.on('message', () => {});
	s.on('connect_error', () => {});
}

function slowWs(reads) {
	const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token()}&since=0`);
	let pacer = null;
	ws.on('open', () => {
		ws._socket.pause();
		if (!reads) return;
		pacer = setInterval(() => {
			ws._socket.resume();
			setTimeout(() => ws._socket?.pause(), 20);
		}, 1000);
	});
	ws.on('message', () => {});
	ws.on('error', () => {});
	ws.on('close', () => {
		clearInterval(pacer);
		if (reads) setTimeout(() => slowWs(reads), 200);
	});
}
slowWs(true);
slowWs(false);
