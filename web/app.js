// web/app.js - the chat page. One person on one side (service) of the chat:
//  - `token` (JWT from the backend) is the grant: its `chats` are the chats shown, `sub`/`name` the user.
//  - The page connects to its own side's gateway (this origin): `send` stores a message with
//    <side>.send_message, and `message` events bring what the OTHER side sent (this side's inbox).
//  - A message this side sends travels to the other side's inbox, which this side's gateway never
//    serves. With `peer` = the other side's gateway URL, the page also watches that gateway (read
//    only), which shows this side's messages arriving there ("shown") and their history.
// Parameters come from the URL fragment (never sent to the server) or the query:
//   #token=<jwt>&side=Workers&other=Consumers&peer=http://host:port&chat=42
// (peer_token: a token for the peer when its gateway has another secret; default: token)
'use strict';

(function () {
	const SEND_TIMEOUT_MS = 10000;
	const params = new URLSearchParams(location.search);
	for (const [k, v] of new URLSearchParams(location.hash.slice(1))) params.set(k, v);
	const $ = (id) => document.getElementById(id);

	// The token's claims, read for display only: the gateway verifies the signature.
	function claims(token) {
		try {
			const b64 = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
			const json = decodeURIComponent(Array.from(atob(b64), (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join(''));
			return JSON.parse(json);
		} catch {
			return null;
		}
	}

	const token = params.get('token') || '';
	const claim = claims(token);
	const side = params.get('side') || 'this side';
	const other = params.get('other') || 'other side';
	if (!claim || !Array.isArray(claim.chats) || claim.chats.length === 0) {
		problem('No usable token: open the link your backend (or scripts/demo.sh) printed, which ends in #token=…');
		$('conn').hidden = true;
		$('send-button').disabled = true;
		return;
	}
	const chats = claim.chats.map(Number);
	let chat = chats.includes(Number(params.get('chat'))) ? Number(params.get('chat')) : chats[0];
	const user = claim.name || claim.sub || 'anonymous';
	$('user').textContent = `${user} · ${side}`;
	document.title = `${user} · chat ${chat}`;
	$('title').textContent = `Chat ${chat}`;
	if (chats.length > 1) {
		for (const c of chats) $('chat').add(new Option(`chat ${c}`, String(c), false, c === chat));
		$('chat-pick').hidden = false;
		$('chat').addEventListener('change', () => {
			chat = Number($('chat').value);
			$('title').textContent = `Chat ${chat}`;
			document.title = `${user} · chat ${chat}`;
			for (const li of $('messages').children) li.hidden = Number(li.dataset.chat) !== chat;
		});
	}

	function problem(text) {
		$('problem').textContent = text;
		$('problem').hidden = !text;
	}

	// ---- messages: one <li> per message id, ordered by created_at (then id) ----
	const list = $('messages');
	const byId = new Map(); // message id -> <li>
	let duplicates = 0; // a message id delivered twice by one gateway (the protocol promises never)
	const seenFrom = { own: new Set(), peer: new Set() };

	const sortKey = (li) => (li.dataset.createdAt || '~') + ' ' + (li.dataset.id || '~');
	function place(li) {
		const key = sortKey(li);
		let before = null;
		for (let n = list.lastElementChild; n; n = n.previousElementSibling) {
			if (n === li) continue;
			if (sortKey(n) <= key) break;
			before = n;
		}
		if (li.nextElementSibling !== before || li.parentNode !== list) list.insertBefore(li, before);
		const main = list.parentElement;
		if (main.scrollHeight - main.scrollTop - main.clientHeight < 120) main.scrollTop = main.scrollHeight;
	}

	function timeOf(iso) {
		const d = new Date(iso);
		return isNaN(d) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
	}

	function element(mine, chatId, body) {
		const li = document.createElement('li');
		li.className = mine ? 'msg mine' : 'msg theirs';
		li.dataset.chat = String(chatId);
		li.hidden = chatId !== chat;
		li.innerHTML = '<div class="body"></div><div class="meta"><span class="from"></span><time></time><span class="state"></span></div>';
		li.querySelector('.body').textContent = body;
		li.querySelector('.from').textContent = mine ? side : other;
		return li;
	}

	function setMessage(li, m) {
		li.dataset.id = m.id;
		li.dataset.createdAt = m.created_at || '';
		li.querySelector('time').textContent = timeOf(m.created_at);
		if (m.created_at) li.querySelector('time').dateTime = m.created_at;
		byId.set(m.id, li);
	}

	// States of a message this page sends: sending -> sent (ack: stored with its outbox row) -> shown
	// (seen in the other side's gateway); or failed (with the error and a retry button).
	const STATE_TEXT = { sending: 'sending…', sent: 'sent', shown: `shown to ${other}`, failed: 'failed' };
	function setState(li, state, detail) {
		li.dataset.state = state;
		const history = li.dataset.states ? li.dataset.states.split(' ') : [];
		if (history[history.length - 1] !== state) li.dataset.states = [...history, state].join(' ');
		const s = li.querySelector('.state');
		s.dataset.state = state;
		s.textContent = STATE_TEXT[state] + (detail ? `: ${detail}` : '');
		li.querySelector('button.retry')?.remove();
	}

	function received(from, m) {
		if (seenFrom[from].has(m.id)) {
			duplicates++;
			document.body.dataset.duplicates = String(duplicates);
			return;
		}
		seenFrom[from].add(m.id);
		const existing = byId.get(m.id);
		if (from === 'peer') {
			// One of this side's messages, as the other side's gateway shows it.
			if (existing) {
				if (existing.dataset.state === 'sent') setState(existing, 'shown');
				return;
			}
			const li = element(true, m.chat_id, m.body);
			setMessage(li, m);
			li.dataset.seq = String(m.seq);
			setState(li, 'shown');
			place(li);
			return;
		}
		if (existing) return;
		const li = element(false, m.chat_id, m.body);
		setMessage(li, m);
		li.dataset.seq = String(m.seq);
		place(li);
	}

	// ---- connections ----
	// auth is a function so each (re)connect sends the highest seq this socket has shown: 0 at first,
	// which replays the chats' whole inbox (until history paging exists). After the first connect
	// socket.io-client adds its recovery pid and offset, which the gateway prefers; `since` covers a
	// reconnect before any message arrived.
	function connect(url, from, indicator, token) {
		let state = 'connecting', missed = 0, lastSeq = 0;
		const show = (s, text) => {
			state = s;
			indicator.dataset.state = s;
			indicator.textContent = text;
		};
		const label = from === 'own' ? '' : `${other} gateway: `;
		const socket = io(url, {
			auth: (cb) => cb({ token, since: lastSeq }),
			reconnectionDelay: 250,
			reconnectionDelayMax: 2000,
		});
		socket.on('connect', () => {
			if (state === 'reconnecting') {
				missed = 0;
				show('back', `${label}back · ${socket.recovered ? 'missed messages filled in' : 'reloaded'}`);
			} else show('connected', `${label}connected`);
			if (from === 'own') sendButton();
		});
		socket.on('message', (m) => {
			if (m.seq > lastSeq) lastSeq = m.seq;
			if (state === 'back') {
				missed++;
				indicator.textContent = `${label}back · ${missed} new since reconnecting`;
			}
			received(from, m);
		});
		socket.on('disconnect', (reason) => {
			if (reason === 'io server disconnect') show('expired', `${label}token expired: open a fresh link`);
			else if (reason !== 'io client disconnect') show('reconnecting', `${label}reconnecting…`);
			if (from === 'own') sendButton();
		});
		socket.io.on('reconnect_attempt', () => {
			if (state !== 'reconnecting') show('reconnecting', `${label}reconnecting…`);
		});
		socket.on('connect_error', (err) => {
			if (socket.active) {
				if (state !== 'connecting') show('reconnecting', `${label}reconnecting…`);
				return;
			}
			const why = err.data && err.data.reason ? ` (${err.data.reason})` : '';
			show('refused', `${label}refused: ${err.message}${why}`);
		});
		return socket;
	}

	const own = connect(location.origin, 'own', $('conn'), token);
	if (params.get('peer')) {
		$('peer-conn').hidden = false;
		connect(params.get('peer'), 'peer', $('peer-conn'), params.get('peer_token') || token);
	}

	// ---- sending ----
	function sendButton() {
		$('send-button').disabled = !own.connected;
	}

	function send(li, body, chatId) {
		setState(li, 'sending');
		if (!own.connected) return fail(li, body, chatId, 'not connected');
		own.timeout(SEND_TIMEOUT_MS).emit('send', { chat_id: chatId, body }, (err, ack) => {
			if (err) return fail(li, body, chatId, `no answer within ${SEND_TIMEOUT_MS / 1000} s; it may have been stored`);
			if (!ack || !ack.ok) {
				const e = (ack && ack.error) || {};
				return fail(li, body, chatId, [e.message || 'refused', e.sqlstate && `(${e.sqlstate})`, e.hint].filter(Boolean).join(' '));
			}
			const shownAlready = byId.get(ack.message.id);
			if (shownAlready && shownAlready !== li) {
				// The other side's gateway was faster than our ack: keep one element, with the full story.
				shownAlready.dataset.states = 'sending sent shown';
				li.remove();
				return;
			}
			setMessage(li, ack.message);
			setState(li, 'sent');
			place(li);
		});
	}

	function fail(li, body, chatId, why) {
		setState(li, 'failed', why);
		const retry = document.createElement('button');
		retry.type = 'button';
		retry.className = 'retry';
		retry.textContent = 'Retry';
		retry.addEventListener('click', () => send(li, body, chatId));
		li.querySelector('.meta').append(retry);
	}

	$('send').addEventListener('submit', (ev) => {
		ev.preventDefault();
		const body = $('body').value;
		if (!body.trim()) return;
		$('body').value = '';
		const li = element(true, chat, body);
		place(li);
		send(li, body, chat);
	});
	$('body').addEventListener('keydown', (ev) => {
		if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
			ev.preventDefault();
			$('send').requestSubmit();
		}
	});
	sendButton();
})();
