// tests/harness/ws_client.mjs - plain /ws clients for the Node test peers (docs/client-protocol.md, "Plain
// WebSocket"), one implementation of what the suites need of one:
//   openWs(url, headers)       records every JSON frame (ws.frames) and the close (ws.closed: code,
//                              reason); ws.opened resolves on open; ws.ask(frame) sends it with a
//                              fresh ref and resolves with the frame that answers that ref
//   resumingWs(urlFor, onFrame, { minDelay, maxDelay })
//                              a client that reconnects after every close, to urlFor(), backing off
//                              from minDelay doubling to maxDelay (reset by a welcome frame); the
//                              caller's urlFor carries ?since= the highest seq it was shown.
//                              Returns { connected(), close() }.
import WebSocket from 'ws';
import { waitUntil } from './check.mjs';

export function openWs(url, headers = {}) {
	const ws = new WebSocket(url, { headers });
	ws.frames = [];
	ws.closed = null;
	let ref = 0;
	ws.on('message', (data) => ws.frames.push(JSON.parse(data.toString())));
	ws.on('close', (code, reason) => { ws.closed = { code, reason: reason.toString() }; });
	ws.on('error', () => {});
	ws.opened = new Promise((r) => ws.once('open', r));
	ws.ask = async (frame) => {
		const r = ++ref;
		ws.send(JSON.stringify({ ...frame, ref: r }));
		await waitUntil(`answer to ref ${r}`, () => ws.frames.some((f) => f.ref === r), 10000, 10);
		return ws.frames.find((f) => f.ref === r);
	};
	return ws;
}

export function resumingWs(urlFor, onFrame, { minDelay = 100, maxDelay = 1000 } = {}) {
	let ws = null;
	let delay = minDelay;
	let closing = false;
	const open = () => {
		ws = new WebSocket(urlFor());
		ws.on('error', () => {});
		ws.on('message', (data) => {
			const f = JSON.parse(data.toString());
			if (f.type === 'welcome') delay = minDelay;
			onFrame(f);
		});
		ws.on('close', () => {
			if (closing) return;
			setTimeout(open, delay);
			delay = Math.min(maxDelay, delay * 2);
		});
	};
	open();
	return {
		connected: () => ws.readyState === WebSocket.OPEN,
		close: () => { closing = true; ws.terminate(); },
	};
}
