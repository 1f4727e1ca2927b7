// tests/gateway/cut_proxy.mjs - a TCP proxy in front of a gateway that cuts one WebSocket connection
// at a chosen point of a send (tests/gateway/cut_sends.mjs). It reads the WebSocket frames both ways
// (a client's frames unmasked, the upgrade request without Sec-WebSocket-Extensions so that no frame
// is compressed) and, once armed with a send's marker (its client_msg_id), acts on the first client
// frame that carries it:
//   before   the frame is dropped: the request never reaches the gateway
//   after    the frame is forwarded, then the connection is cut at once
//   commit   the frame is forwarded; the gateway's frames are dropped from then on, and once
//            committed() says the message is in the database the connection is cut (no ack arrives)
//   ack      the frame is forwarded; the gateway's frames pass until the one that answers the send
//            (a Socket.IO ack packet, or a /ws ack or error frame), which is dropped, and the cut
// and, per cut, how: `drop` (both sockets destroyed: the client sees a close) or `stall` (the
// connection stays open and nothing more passes either way: the client must notice by its own
// timeout, abandon it and send again on a new one). Connections not armed pass everything.
import net from 'node:net';

export const POINTS = ['before', 'after', 'commit', 'ack'];
export const MODES = ['drop', 'stall'];

// FrameReader: splits a WebSocket byte stream after its HTTP head into frames; each frame's raw bytes
// and its payload as text (unmasked).
class FrameReader {
	constructor() {
		this.buf = Buffer.alloc(0);
		this.headDone = false;
	}
	// push returns [{raw, text, head}] of every whole piece now available (the HTTP head is one piece)
	push(chunk) {
		this.buf = Buffer.concat([this.buf, chunk]);
		const out = [];
		if (!this.headDone) {
			const end = this.buf.indexOf('\r\n\r\n');
			if (end < 0) return out;
			out.push({ raw: this.buf.subarray(0, end + 4), head: true, text: this.buf.subarray(0, end + 4).toString() });
			this.buf = this.buf.subarray(end + 4);
			this.headDone = true;
		}
		for (;;) {
			const b = this.buf;
			if (b.length < 2) return out;
			let len = b[1] & 0x7f;
			let at = 2;
			if (len === 126) {
				if (b.length < 4) return out;
				len = b.readUInt16BE(2);
				at = 4;
			} else if (len === 127) {
				if (b.length < 10) return out;
				len = Number(b.readBigUInt64BE(2));
				at = 10;
			}
			const masked = (b[1] & 0x80) !== 0;
			const mask = masked ? b.subarray(at, at + 4) : null;
			if (masked) at += 4;
			if (b.length < at + len) return out;
			const payload = Buffer.from(b.subarray(at, at + len));
			if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
			out.push({ raw: Buffer.from(b.subarray(0, at + len)), head: false, text: payload.toString() });
			this.buf = b.subarray(at + len);
		}
	}
}

// answersSend: whether a gateway frame's text answers a send (Socket.IO: an ack packet "43<id>[...]";
// /ws: {"type":"ack"} or {"type":"error"} with a ref).
function answersSend(text) {
	if (/^43\d+\[/.test(text)) return true;
	if (!text.startsWith('{')) return false;
	try {
		const f = JSON.parse(text);
		return f.type === 'ack' || f.type === 'error';
	} catch {
		return false;
	}
}

export class CutProxy {
	// target: the gateway's port; committed(marker): resolves true once the send is in the database
	constructor({ target, committed }) {
		this.target = target;
		this.committed = committed;
		this.armed = null; // {marker, point, mode, done}
		this.conns = new Set();
		this.cuts = { before: 0, after: 0, commit: 0, ack: 0 };
	}

	async start() {
		this.server = net.createServer((client) => this.accept(client));
		await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
		this.port = this.server.address().port;
	}

	// arm: the next client frame carrying marker is cut at point, by mode; resolves when it was cut
	arm(marker, point, mode) {
		return new Promise((resolve) => (this.armed = { marker, point, mode, resolve }));
	}

	accept(client) {
		const upstream = net.connect(this.target, '127.0.0.1');
		const conn = { client, upstream, state: 'open', holdDown: false };
		this.conns.add(conn);
		const up = new FrameReader();
		const down = new FrameReader();
		const end = () => {
			client.destroy();
			upstream.destroy();
			this.conns.delete(conn);
		};
		client.on('error', end);
		upstream.on('error', end);
		client.on('close', end);
		upstream.on('close', end);
		const cut = (a) => {
			this.cuts[a.point]++;
			this.armed = null;
			if (a.mode === 'drop') end();
			else conn.state = 'stalled';
			a.resolve();
		};
		client.on('data', (chunk) => {
			for (const piece of up.push(chunk)) {
				if (conn.state !== 'open') return;
				if (piece.head) {
					// no permessage-deflate: the frames stay readable
					upstream.write(piece.text.replace(/^Sec-WebSocket-Extensions:.*\r\n/im, ''));
					continue;
				}
				const a = this.armed;
				if (!a || conn.armed || !piece.text.includes(a.marker)) {
					upstream.write(piece.raw);
					continue;
				}
				if (a.point === 'before') {
					cut(a);
					return;
				}
				upstream.write(piece.raw);
				if (a.point === 'after') {
					cut(a);
					return;
				}
				conn.armed = a;
				if (a.point === 'commit') {
					conn.holdDown = true; // nothing of the gateway's reaches the client from here
					this.committed(a.marker).then(() => conn.state === 'open' && cut(a));
				}
			}
		});
		upstream.on('data', (chunk) => {
			for (const piece of down.push(chunk)) {
				if (conn.state !== 'open' || conn.holdDown) return;
				const a = conn.armed;
				if (a && a.point === 'ack' && !piece.head && answersSend(piece.text)) {
					cut(a);
					return;
				}
				client.write(piece.raw);
			}
		});
	}

	async stop() {
		for (const c of this.conns) {
			c.client.destroy();
			c.upstream.destroy();
		}
		await new Promise((r) => this.server.close(r));
	}
}
