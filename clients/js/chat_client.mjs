// clients/js/chat_client.mjs - a small chat client for chat-outboxd's Socket.IO gateway (ESM, no build
// step; types in JSDoc). It never loses what its user wrote and never sends it twice
// (docs/client-protocol.md, "Client message ids"; docs/gateway.md, "The JavaScript client library"):
//  - send(), edit() and remove() put the request in a queue kept in a store (MemoryStore in Node,
//    WebStorageStore over localStorage in a browser: it outlives a reload or a closed tab) and return at
//    once. Each send gets its client_msg_id (a UUID) when it is queued, so every attempt is the same
//    send. The queue goes out in order, one request at a time, whenever the connection is there,
//    again and again with backoff until one is acked; a request the gateway refuses for good (a chat
//    outside the token, a removed membership, a body too long...) leaves the queue as `refused`, with
//    why. Retried: no answer, a lost connection, rate_limited, busy, unavailable, a database error
//    of class 08, 40, 53 or 57.
//  - Messages are shown once: by id, and a received message or change whose seq is at or below the
//    last one shown is skipped. The last seq shown is kept in the store, and every connection (a
//    reconnect, or a new page with the same store) asks the gateway for everything after it
//    (auth.since): the gateway pages through all of it, with no cap.
// The Socket.IO client is passed in (`io`: socket.io-client's in Node, the browser build's global in a
// page), so this file imports nothing; or a socket the app made itself (`socket`: the web chat's, whose
// own handlers show the messages), which the queue then uses as it is.

/**
 * @typedef {{id: string, chat_id: number, body: string|null, created_at: string|null, sender: string|null,
 *   seq?: number|null, client_msg_id?: string, edited_at?: string, deleted_at?: string, dir?: string}} Message
 * @typedef {'send'|'edit'|'delete'} RequestKind
 * @typedef {{key: string, kind: RequestKind, chat_id?: number, message_id?: string, body?: string,
 *   client_msg_id?: string, queued_at: number, tries: number}} Request
 *   a queued request: key is its own id in the queue (for a send, its client_msg_id)
 * @typedef {{queue: Request[], lastSeq: number|null}} Saved
 * @typedef {{load(): Saved, save(saved: Saved): void}} Store
 */

/** A store that lives as long as the process (Node, tests). */
export class MemoryStore {
	constructor() {
		/** @type {Saved} */
		this.saved = { queue: [], lastSeq: null };
	}
	/** @returns {Saved} */
	load() {
		return structuredClone(this.saved);
	}
	/** @param {Saved} saved */
	save(saved) {
		this.saved = structuredClone(saved);
	}
}

/** A store in a Web Storage (localStorage in a page): kept across reloads and closed tabs. */
export class WebStorageStore {
	/** @param {Storage} storage @param {string} name the key (one per user and gateway) */
	constructor(storage, name) {
		this.storage = storage;
		this.name = name;
	}
	/** @returns {Saved} */
	load() {
		try {
			const s = JSON.parse(this.storage.getItem(this.name) ?? 'null');
			if (s && Array.isArray(s.queue)) return { queue: s.queue, lastSeq: s.lastSeq ?? null };
		} catch {
			// a broken entry is replaced by the next save
		}
		return { queue: [], lastSeq: null };
	}
	/** @param {Saved} saved */
	save(saved) {
		this.storage.setItem(this.name, JSON.stringify(saved));
	}
}

const RETRIED_CODES = new Set(['rate_limited', 'busy', 'unavailable']);

/** @param {any} error a refused ack's error @returns {boolean} whether sending again may succeed */
export function retryable(error) {
	if (!error || typeof error !== 'object') return true;
	if (RETRIED_CODES.has(error.code)) return true;
	if (typeof error.sqlstate === 'string') return /^(08|40|53|57)/.test(error.sqlstate);
	// no SQLSTATE and no code: the gateway lost its database connection mid-send
	return !error.code && error.message !== 'forbidden';
}

const newKey = () => globalThis.crypto.randomUUID();

export class ChatClient {
	/**
	 * @param {{url?: string, token?: string, io?: Function, socket?: any, store?: Store, ackTimeoutMs?: number,
	 *   minBackoffMs?: number, maxBackoffMs?: number}} options
	 *   url: the gateway (http://host:port); io: socket.io-client's io(); or socket: one already made
	 */
	constructor({ url, token, io, socket, store = new MemoryStore(), ackTimeoutMs = 10000, minBackoffMs = 250, maxBackoffMs = 10000 }) {
		Object.assign(this, { url, token, io, socket, store, ackTimeoutMs, minBackoffMs, maxBackoffMs });
		const saved = store.load();
		/** @type {Request[]} */
		this.queue = saved.queue;
		/** @type {number|null} the highest seq shown */
		this.lastSeq = saved.lastSeq;
		/** @type {Set<string>} ids of messages shown */
		this.shown = new Set();
		/** @type {Map<string, Function[]>} */
		this.listeners = new Map();
		this.flushing = false;
		this.backoff = minBackoffMs;
		this.timer = null;
		this.closed = false;
	}

	/**
	 * on(event, fn): 'message' (a received or sent message, once per id: Message), 'edited', 'deleted'
	 * (a change, once per seq), 'acked' (Request, Message, repeat), 'refused' (Request, error),
	 * 'queue' (the queue changed: Request[]), 'connect', 'disconnect'.
	 * @param {string} event @param {Function} fn
	 */
	on(event, fn) {
		this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
		return this;
	}

	emit(event, ...args) {
		for (const fn of this.listeners.get(event) ?? []) fn(...args);
	}

	/** Connects (and reconnects by itself until close()); the queue goes out once connected. */
	connect() {
		if (this.socket) {
			// the app's socket: only the queue's part, the app shows the messages
			this.socket.on('connect', () => {
				this.backoff = this.minBackoffMs;
				this.flush();
			});
			if (this.socket.connected) this.flush();
			return this;
		}
		this.socket = this.io(this.url, {
			// a function: every reconnect asks for what came after the last seq shown
			auth: (cb) => cb(this.lastSeq === null ? { token: this.token } : { token: this.token, since: this.lastSeq }),
			transports: ['websocket'],
			reconnectionDelay: this.minBackoffMs,
			reconnectionDelayMax: this.maxBackoffMs,
		});
		this.socket.on('connect', () => {
			this.backoff = this.minBackoffMs;
			this.emit('connect');
			this.flush();
		});
		this.socket.on('disconnect', (reason) => this.emit('disconnect', reason));
		this.socket.on('message', (m) => this.received(m, 'message'));
		this.socket.on('message_edited', (m) => this.received(m, 'edited'));
		this.socket.on('message_deleted', (m) => this.received(m, 'deleted'));
		this.socket.on('sent', (m) => this.show(m));
		return this;
	}

	/** join(chat_id): the ack ({ok:true} or {error}). */
	join(chat_id) {
		return this.socket.timeout(this.ackTimeoutMs).emitWithAck('join', { chat_id });
	}

	/**
	 * send(chat_id, body): queued at once (kept in the store) and sent until acked.
	 * @returns {Request}
	 */
	send(chat_id, body) {
		const key = newKey();
		return this.enqueue({ key, kind: 'send', chat_id, body, client_msg_id: key, queued_at: Date.now(), tries: 0 });
	}

	/** edit(message_id, body): queued like a send; sent again it changes nothing twice. @returns {Request} */
	edit(message_id, body) {
		return this.enqueue({ key: newKey(), kind: 'edit', message_id, body, queued_at: Date.now(), tries: 0 });
	}

	/** remove(message_id): the delete, queued like a send. @returns {Request} */
	remove(message_id) {
		return this.enqueue({ key: newKey(), kind: 'delete', message_id, queued_at: Date.now(), tries: 0 });
	}

	/** @param {Request} r */
	enqueue(r) {
		this.queue.push(r);
		this.persist();
		this.flush();
		return r;
	}

	persist() {
		this.store.save({ queue: this.queue, lastSeq: this.lastSeq });
		this.emit('queue', [...this.queue]);
	}

	// flush: the queue's head, one at a time, while connected
	async flush() {
		if (this.flushing || this.closed) return;
		this.flushing = true;
		try {
			while (this.queue.length && this.socket?.connected && !this.closed) {
				const r = this.queue[0];
				r.tries++;
				let answer = null;
				try {
					answer = await this.socket.timeout(this.ackTimeoutMs).emitWithAck(r.kind, this.argument(r));
				} catch {
					answer = null; // no answer in time, or the connection went
				}
				if (answer?.ok) {
					this.queue.shift();
					this.persist();
					this.show(answer.message);
					this.emit('acked', r, answer.message, answer.repeat === true);
					this.backoff = this.minBackoffMs;
					continue;
				}
				if (answer && !retryable(answer.error)) {
					this.queue.shift();
					this.persist();
					this.emit('refused', r, answer.error);
					continue;
				}
				this.persist(); // its tries
				await this.wait();
			}
		} finally {
			this.flushing = false;
		}
	}

	wait() {
		const ms = this.backoff;
		this.backoff = Math.min(this.backoff * 2, this.maxBackoffMs);
		return new Promise((r) => (this.timer = setTimeout(r, ms)));
	}

	/** @param {Request} r */
	argument(r) {
		if (r.kind === 'send') return { chat_id: r.chat_id, body: r.body, client_msg_id: r.client_msg_id };
		if (r.kind === 'edit') return { message_id: r.message_id, body: r.body };
		return { message_id: r.message_id };
	}

	// received: a message or change of the inbox, with its seq: shown once, the seq remembered
	received(m, event) {
		if (typeof m?.seq === 'number') {
			if (this.lastSeq !== null && m.seq <= this.lastSeq) return;
			this.lastSeq = m.seq;
			this.store.save({ queue: this.queue, lastSeq: this.lastSeq });
		}
		if (event === 'message') this.show(m);
		else this.emit(event, m);
	}

	// show: a message once per id (the ack, `sent` and a repeat's `sent` name the same one)
	show(m) {
		if (!m?.id || this.shown.has(m.id)) return;
		this.shown.add(m.id);
		this.emit('message', m);
	}

	/** The requests not acked yet, oldest first. @returns {Request[]} */
	pending() {
		return [...this.queue];
	}

	close() {
		this.closed = true;
		clearTimeout(this.timer);
		this.socket?.close();
	}
}
