// web/app.js - the chat page. One person on one side (service) of the chat, one connection: the
// gateway that served the page (docs/client-protocol.md, "Conversations").
//  - `token` (JWT from the backend) is the grant: its `chats` are the chats shown, `sub`/`name` the user.
//    A token without `chats` (a gateway with --authz membership decides from the database) shows the
//    chats the gateway joined it to, as their chat_state arrives.
//  - History: `history` pages through what this side received and what its users sent, newest first,
//    on open and whenever the list is scrolled to its top; live: `message` (received) and `sent`
//    (sent by this side, any tab), deduplicated by id.
//  - A message this page sends goes through the client library (clients/js/chat_client.mjs, served as
//    chat_client.js): waiting (in the library's queue, kept in localStorage across a reload or a closed
//    tab, sent with its client_msg_id whenever the connection is there and again with backoff until
//    acked: stored once) -> sent (ack) -> shown (`shown`: the other side's gateway pushed it); or
//    failed with the gateway's reason when it refuses it for good (a body too long, a removed
//    membership). There is no Retry: what can be retried, the page retries.
//  - Edits and deletes: this user's own messages (sender = the token's sub) have Edit and Delete
//    (`edit`, `delete`); `message_edited` / `message_deleted` and history's current state show
//    "edited" / "deleted" on both sides.
//  - Presence, typing, read receipts (this page reports how far it has read what is on screen) and
//    unread counts per chat. A big chat (chat_state with users_next) shows its online count and the first
//    page of its users, "more…" pages on (`presence {after}`); coalesced presence and typing frames apply as
//    a batch.
//  - Membership (a gateway with --authz membership): `removed` {chat_id} ends this user's part in a
//    chat: the chat is marked removed in the selector, a notice says so while it is shown, and
//    writing, editing and deleting there are disabled (the gateway would refuse them); what was shown
//    before stays. After a reload a chat of the token's claim whose history is refused `forbidden` is
//    shown the same way. `chats_cut` (a user in more chats than --max-member-chats, at connect or when one
//    more is added) shows a notice that only the first ones are here.
// Parameters come from the URL fragment (never sent to the server) or the query:
//   #token=<jwt>&side=Workers&other=Consumers&chat=42
'use strict';

(function () {
	const SEND_TIMEOUT_MS = 10000;
	const REQUEST_TIMEOUT_MS = 10000;
	const PAGE = 50;               // messages per history request
	const TYPING_EVERY_MS = 2000;  // at most one typing report this often while the user types
	const TYPING_SHOWN_MS = 5000;  // another user's typing shows this long after their last report
	const PRESENCE_EVERY_MS = 15000;
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
	const byMembership = claim && !Array.isArray(claim.chats) && typeof claim.sub === 'string' && claim.sub !== '';
	if (!claim || (!byMembership && (!Array.isArray(claim.chats) || claim.chats.length === 0))) {
		problem('No usable token: open the link your backend (or scripts/demo.sh) printed, which ends in #token=…');
		$('conn').hidden = true;
		$('send-button').disabled = true;
		return;
	}
	// chats: the token's, or (byMembership) those the gateway joined this user to, learnt from chat_state;
	// chat is the one shown (null until one is known). The `chat` parameter picks it when it is one.
	const chats = byMembership ? [] : claim.chats.map(Number);
	const wanted = Number(params.get('chat'));
	let chat = byMembership ? null : chats.includes(wanted) ? wanted : chats[0];
	let picked = false; // the user chose a chat in the selector
	const user = claim.name || claim.sub || 'anonymous';
	let myService = null; // learnt from chat_state.me
	$('user').textContent = `${user} · ${side}`;

	function problem(text) {
		$('problem').textContent = text;
		$('problem').hidden = !text;
	}

	// ---- per chat: history paging, unread count, read cursors, presence, typing ----
	const newChatState = () => ({
		next: null, more: true, loading: false, loaded: false, refreshing: false,
		unread: 0, myRead: 0, reads: new Map(), users: [], typing: new Map(),
		// presence: online is the chat's count; users the list as far as this page holds it, sorted; usersNext
		// null when users is the whole list, else the cursor of the next page ('' when only a new first page knows)
		online: 0, usersNext: null, pagingUsers: false,
		newest: null, // the received message with the highest seq: what a read report names
		removed: false, // `removed`: this user is no longer a member (final for this page)
		shownUpTo: '', // created_at of the last of this side's messages the other side's gateway pushed
	});
	const chatState = new Map(chats.map((c) => [c, newChatState()]));
	// current: the shown chat's state (null while no chat is known yet)
	const current = () => (chat === null ? null : chatState.get(chat));

	// addChat: a chat the gateway joined this user to (byMembership), in the selector; the first one
	// known, or the `chat` parameter's, is shown unless the user picked one.
	function addChat(c) {
		if (chatState.has(c)) return;
		chats.push(c);
		chatState.set(c, newChatState());
		$('chat').add(new Option(`chat ${c}`, String(c), false, false));
		$('chat-pick').hidden = chats.length < 2;
		if (chat === null || (c === wanted && !picked)) {
			chat = c;
			$('chat').value = String(c);
			showChat();
		}
	}
	const userKey = (u) => `${u.service}\t${u.sub}`;
	const isMe = (u) => u && u.service === myService && u.sub === (claim.sub || '');
	const sideOf = (u) => (u.service === myService ? side : other);
	const nameOf = (u) => u.name || u.sub;

	function showChat() {
		if (chat === null) {
			$('title').textContent = own.connected ? 'No chat yet' : 'chat_outbox';
			sendButton();
			return;
		}
		$('title').textContent = `Chat ${chat}`;
		document.title = `${user} · chat ${chat}`;
		for (const li of list.children) li.hidden = Number(li.dataset.chat) !== chat;
		renderPresence();
		renderTyping();
		renderReads();
		renderOlder();
		renderRemoved();
		const s = chatState.get(chat);
		if (!s.loaded && !s.removed && own.connected) loadOlder(chat);
		scrollToEnd();
		maybeRead();
	}

	function renderUnread() {
		if (chats.length < 2) return;
		for (const opt of $('chat').options) {
			const s = chatState.get(Number(opt.value));
			if (s.removed) continue;
			opt.dataset.unread = String(s.unread);
			opt.textContent = `chat ${opt.value}${s.unread ? ` · ${s.unread >= 1000 ? '1000+' : s.unread} unread` : ''}`;
		}
	}

	// ---- messages: one <li> per message id, ordered by created_at (then id) ----
	const list = $('messages');
	const main = $('scroller');
	const byId = new Map(); // message id -> <li>
	const liveIn = new Set(); // ids pushed as `message`: the gateway promises each once
	const shownIds = new Set(); // ids the other side's gateway pushed (`shown`)
	let duplicates = 0;

	const sortKey = (li) => (li.dataset.createdAt || '~') + ' ' + (li.dataset.id || '~');
	// order holds the list's elements in display order with their keys, so placing one is a binary
	// search, whatever the length of the history (messages of one transaction share a created_at).
	const order = [];
	function place(li) {
		if (li.placed) {
			const at = order.indexOf(li);
			if (at >= 0) order.splice(at, 1);
		}
		li.placed = true;
		const key = (li.key = sortKey(li));
		let lo = 0, hi = order.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (order[mid].key <= key) lo = mid + 1;
			else hi = mid;
		}
		while (order[lo] && order[lo].parentNode !== list) order.splice(lo, 1); // removed meanwhile
		const before = order[lo] || null;
		order.splice(lo, 0, li);
		if (li.nextElementSibling !== before || li.parentNode !== list) list.insertBefore(li, before);
	}
	const nearEnd = () => main.scrollHeight - main.scrollTop - main.clientHeight < 120;
	const scrollToEnd = () => { main.scrollTop = main.scrollHeight; };

	function timeOf(iso) {
		const d = new Date(iso);
		return isNaN(d) ? '' : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
	}

	function element(mine, chatId, body) {
		const li = document.createElement('li');
		li.className = mine ? 'msg mine' : 'msg theirs';
		li.dataset.chat = String(chatId);
		li.hidden = chatId !== chat;
		li.innerHTML = '<div class="body"></div><div class="meta"><span class="from"></span><time></time><span class="changed"></span><span class="state"></span><span class="readby"></span></div>';
		li.querySelector('.body').textContent = body;
		li.querySelector('.from').textContent = mine ? side : other;
		return li;
	}

	function setMessage(li, m) {
		li.dataset.id = m.id;
		li.dataset.createdAt = m.created_at || '';
		if (m.seq !== null && m.seq !== undefined) li.dataset.seq = String(m.seq);
		li.querySelector('time').textContent = timeOf(m.created_at);
		if (m.created_at) li.querySelector('time').dateTime = m.created_at;
		byId.set(m.id, li);
		if (m.sender !== undefined) li.dataset.sender = m.sender === null ? '' : m.sender;
		setChange(li, m);
	}

	// ---- edits and deletes ----
	// setChange shows a message's current state: the edited body with "edited", or "deleted" without
	// a body. A delete is final; an edit carries the newest body (the gateway orders them).
	function setChange(li, m) {
		if (li.dataset.deleted === 'true') return;
		if (m.deleted_at) {
			li.dataset.deleted = 'true';
			li.querySelector('.body').textContent = '';
			li.querySelector('.changed').textContent = 'deleted';
			li.querySelector('form.edit')?.remove();
		} else if (m.edited_at) {
			li.dataset.edited = 'true';
			if (typeof m.body === 'string') li.querySelector('.body').textContent = m.body;
			li.querySelector('.changed').textContent = 'edited';
		}
		ownControls(li);
	}

	// ownControls: Edit and Delete on this user's own stored messages, while not deleted.
	function ownControls(li) {
		const mineNow = li.classList.contains('mine') && claim.sub && li.dataset.sender === claim.sub &&
			li.dataset.deleted !== 'true' && li.dataset.id && !chatState.get(Number(li.dataset.chat))?.removed;
		const meta = li.querySelector('.meta');
		if (!mineNow) {
			meta.querySelectorAll('button.edit-button, button.delete-button').forEach((b) => b.remove());
			return;
		}
		if (meta.querySelector('button.edit-button')) return;
		const edit = document.createElement('button');
		edit.type = 'button';
		edit.className = 'edit-button';
		edit.textContent = 'Edit';
		edit.addEventListener('click', () => openEditor(li));
		const del = document.createElement('button');
		del.type = 'button';
		del.className = 'delete-button';
		del.textContent = 'Delete';
		del.addEventListener('click', () => change(li, 'delete', { message_id: li.dataset.id }));
		meta.append(edit, del);
	}

	function openEditor(li) {
		if (li.querySelector('form.edit')) return;
		const form = document.createElement('form');
		form.className = 'edit';
		form.innerHTML = '<label class="visually-hidden">Edit message<textarea rows="2"></textarea></label><button type="submit">Save</button><button type="button" class="cancel">Cancel</button>';
		const text = form.querySelector('textarea');
		text.value = li.querySelector('.body').textContent;
		form.querySelector('.cancel').addEventListener('click', () => form.remove());
		form.addEventListener('submit', (ev) => {
			ev.preventDefault();
			if (!text.value.trim()) return;
			change(li, 'edit', { message_id: li.dataset.id, body: text.value });
		});
		li.querySelector('.body').after(form);
		text.focus();
	}

	// change sends an edit or delete; its ack carries the message's new state.
	function change(li, kind, args) {
		if (!own.connected) return problem(`${kind}: not connected`);
		own.timeout(SEND_TIMEOUT_MS).emit(kind, args, (err, ack) => {
			if (err || !ack || !ack.ok) {
				const e = (ack && ack.error) || {};
				return problem(`${kind}: ${err ? 'no answer' : [e.message || 'refused', e.sqlstate && `(${e.sqlstate})`].filter(Boolean).join(' ')}`);
			}
			problem('');
			li.querySelector('form.edit')?.remove();
			setChange(li, ack.message);
		});
	}

	// States of a message this side sent: waiting (queued until acked) -> sent (ack: stored with its
	// outbox row) -> shown (the other side's gateway pushed it); or failed (refused, with why).
	const STATE_TEXT = { waiting: 'waiting…', sent: 'sent', shown: `shown to ${other}`, failed: 'failed' };
	function setState(li, state, detail) {
		li.dataset.state = state;
		const history = li.dataset.states ? li.dataset.states.split(' ') : [];
		if (history[history.length - 1] !== state) li.dataset.states = [...history, state].join(' ');
		const s = li.querySelector('.state');
		s.dataset.state = state;
		s.textContent = STATE_TEXT[state] + (detail ? `: ${detail}` : '');
	}

	// add shows a message from history or live once; returns its element.
	function add(m, mine) {
		const existing = byId.get(m.id);
		if (existing) {
			setChange(existing, m); // a page of history or a `sent` may carry a newer state
			return existing;
		}
		const li = element(mine, m.chat_id, m.body);
		setMessage(li, m);
		const s = chatState.get(m.chat_id);
		if (!mine && s && (!s.newest || m.seq > Number(s.newest.dataset.seq))) s.newest = li;
		if (mine) {
			setState(li, 'sent');
			if (shownIds.has(m.id)) setState(li, 'shown');
		}
		place(li);
		return li;
	}

	// ---- history: newest page on open, older ones when scrolled to the top ----
	function renderOlder() {
		const s = chatState.get(chat);
		const el = $('older');
		el.dataset.state = s.loading ? 'loading' : !s.loaded ? 'idle' : s.more ? 'more' : 'start';
		el.textContent = s.loading ? 'loading older messages…' : s.loaded && !s.more ? 'the beginning of this chat' : '';
	}

	async function history(c, next) {
		return own.timeout(REQUEST_TIMEOUT_MS).emitWithAck('history', {
			chat_id: c, limit: PAGE, before_seq: next ? next.before_seq : null, before_sent: next ? next.before_sent : null,
		}).catch(() => null);
	}

	function showPage(ack) {
		// Keep what is on screen where it is while older messages go in above it.
		const fromEnd = main.scrollHeight - main.scrollTop;
		const wasNearEnd = nearEnd();
		for (const m of ack.messages) add(m, m.dir === 'out');
		if (wasNearEnd) scrollToEnd();
		else main.scrollTop = main.scrollHeight - fromEnd;
	}

	async function loadOlder(c) {
		const s = chatState.get(c);
		if (s.loading || (s.loaded && !s.more)) return;
		s.loading = true;
		renderOlder();
		const ack = await history(c, s.loaded ? s.next : null);
		s.loading = false;
		if (ack && !ack.ok && ack.error.code === 'forbidden') {
			renderOlder();
			return markRemoved(c);
		}
		if (!ack || !ack.ok) {
			renderOlder();
			problem(`history: ${ack ? ack.error.message : 'no answer'}`);
			return;
		}
		problem('');
		s.next = ack.next;
		s.more = ack.more;
		s.loaded = true;
		document.body.dataset.historyPages = String(Number(document.body.dataset.historyPages || 0) + 1);
		showPage(ack);
		renderOlder();
		renderReads();
		// A page that does not fill the screen cannot be scrolled: fetch on.
		if (c === chat && s.more && main.scrollHeight <= main.clientHeight) loadOlder(c);
		maybeRead();
	}

	// refreshNewest fills in the newest page (after a reconnect, or a `shown` for a message this page
	// never saw, such as one sent by another program): the older pages' cursor stays.
	async function refreshNewest(c) {
		const s = chatState.get(c);
		if (s.refreshing || !s.loaded) return;
		s.refreshing = true;
		const ack = await history(c, null);
		s.refreshing = false;
		if (ack && ack.ok) {
			showPage(ack);
			renderReads();
			maybeRead();
		}
	}

	main.addEventListener('scroll', () => {
		if (main.scrollTop < 80) loadOlder(chat);
		maybeRead();
	});

	// ---- read receipts ----
	// What is on screen is read: the newest received message of the chat shown counts once it is in view.
	let readTimer = null;
	function maybeRead() {
		clearTimeout(readTimer);
		readTimer = setTimeout(reportRead, 150);
	}
	function inView(li) {
		const r = li.getBoundingClientRect(), v = main.getBoundingClientRect();
		return r.bottom > v.top && r.top < v.bottom;
	}
	async function reportRead() {
		if (document.visibilityState !== 'visible' || !own.connected || !claim.sub) return;
		const s = current();
		if (!s || s.removed) return;
		const li = s.newest;
		if (!li || Number(li.dataset.seq) <= s.myRead || !inView(li)) return;
		const c = chat, seq = Number(li.dataset.seq);
		const ack = await own.timeout(REQUEST_TIMEOUT_MS).emitWithAck('read', { chat_id: c, seq }).catch(() => null);
		if (ack && ack.ok && ack.seq !== null) {
			chatState.get(c).myRead = Math.max(chatState.get(c).myRead, ack.seq);
			chatState.get(c).unread = 0;
			renderUnread();
		}
	}
	document.addEventListener('visibilitychange', maybeRead);

	// renderReads puts "read by <name>" on the message up to which each other participant has read;
	// only the elements marked before are cleared, so a long history costs nothing here.
	let marked = [];
	function renderReads() {
		for (const li of marked) {
			li.querySelector('.readby').textContent = '';
			delete li.dataset.readBy;
		}
		marked = [];
		const names = new Map();
		for (const r of chatState.get(chat).reads.values()) {
			if (isMe(r.user) || !byId.has(r.message_id)) continue;
			names.set(r.message_id, [...(names.get(r.message_id) || []), nameOf(r.user)]);
		}
		for (const [id, who] of names) {
			const li = byId.get(id);
			li.dataset.readBy = who.join(', ');
			li.querySelector('.readby').textContent = `read by ${who.join(', ')}`;
			marked.push(li);
		}
		// What the other side has read, or its gateway pushed (chat_state.shown, the shown events), reached
		// it: this side's messages up to there are shown, also those loaded from history (which carries
		// no delivery state).
		let upTo = chatState.get(chat).shownUpTo;
		for (const r of chatState.get(chat).reads.values())
			if (r.user.service !== myService && r.created_at && r.created_at > upTo) upTo = r.created_at;
		if (upTo)
			for (const li of list.querySelectorAll(`li.mine[data-chat="${chat}"][data-state="sent"]`))
				if (li.dataset.createdAt && li.dataset.createdAt <= upTo) setState(li, 'shown');
	}

	// ---- presence and typing ----
	function renderPresence() {
		const ul = $('presence'), s = chatState.get(chat);
		// a big chat (the gateway sent one page): the count, and the list paged on demand
		$('online').textContent = s.usersNext !== null ? `${s.online} online` : '';
		$('online').dataset.online = String(s.online);
		$('presence-more').hidden = !s.usersNext;
		ul.replaceChildren(...s.users.map((u) => {
			const li = document.createElement('li');
			li.dataset.user = userKey(u);
			li.textContent = `${nameOf(u)} (${sideOf(u)})`;
			if (isMe(u)) li.className = 'me';
			return li;
		}));
	}

	function renderTyping() {
		const s = current(), now = Date.now();
		if (!s) return;
		for (const [k, t] of s.typing) if (t.until <= now) s.typing.delete(k);
		const who = [...s.typing.values()].map((t) => nameOf(t.user));
		$('typing').textContent = who.length ? `${who.join(', ')} ${who.length > 1 ? 'are' : 'is'} typing…` : '';
		$('typing').dataset.who = who.join(', ');
	}
	setInterval(renderTyping, 500);

	let lastTyping = 0;
	$('body').addEventListener('input', () => {
		if (!$('body').value.trim() || !own.connected || !claim.sub || chat === null || Date.now() - lastTyping < TYPING_EVERY_MS) return;
		lastTyping = Date.now();
		own.emit('typing', { chat_id: chat, typing: true });
	});

	// ---- the connection ----
	let connState = 'connecting', missed = 0;
	const indicator = $('conn');
	const showConn = (s, text) => {
		connState = s;
		indicator.dataset.state = s;
		indicator.textContent = text;
	};
	// On its first connect the socket gets no replay (history comes page by page); after that
	// socket.io-client's recovery pid and offset replay what was missed while disconnected.
	const own = io(location.origin, {
		auth: (cb) => cb({ token }),
		reconnectionDelay: 250,
		reconnectionDelayMax: 2000,
	});
	own.on('connect', () => {
		if (connState === 'reconnecting') {
			missed = 0;
			showConn('back', `back · ${own.recovered ? 'missed messages filled in' : 'reloaded'}`);
			for (const c of chats) if (!chatState.get(c).removed) refreshNewest(c);
		} else showConn('connected', 'connected');
		const s = current();
		if (s && !s.loaded && !s.removed) loadOlder(chat);
		if (chat === null) showChat();
		sendButton();
	});
	own.on('message', (m) => {
		if (liveIn.has(m.id)) {
			duplicates++;
			document.body.dataset.duplicates = String(duplicates);
			return;
		}
		liveIn.add(m.id);
		if (connState === 'back') {
			missed++;
			indicator.textContent = `back · ${missed} new since reconnecting`;
		}
		const end = nearEnd();
		const fresh = !byId.has(m.id);
		add(m, false);
		const s = chatState.get(m.chat_id);
		if (s) {
			// A message from the other side ends its typing indicator.
			for (const [k, t] of s.typing) if (!isMe(t.user) && t.user.service !== myService) s.typing.delete(k);
			if (fresh && m.seq > s.myRead) s.unread++;
			renderUnread();
			renderTyping();
		}
		if (end) scrollToEnd();
		maybeRead();
	});
	own.on('sent', (m) => {
		const end = nearEnd();
		add(m, true);
		if (end) scrollToEnd();
	});
	// An edit or delete of a message this page does not show (not loaded yet) is in its state when
	// history loads it.
	own.on('message_edited', (e) => {
		const li = byId.get(e.id);
		if (li) setChange(li, e);
	});
	own.on('message_deleted', (e) => {
		const li = byId.get(e.id);
		if (li) setChange(li, e);
	});
	own.on('removed', ({ chat_id: c }) => markRemoved(c));
	// chats_cut: the user is in more chats than one connection holds (at connect, or live when one more was
	// added); the others reach this page only once joined, so it says so.
	own.on('chats_cut', ({ max_member_chats: n }) => {
		$('cut').textContent = `You are a member of more chats than one connection holds (${n}): this page shows the first ${n}`;
		$('cut').dataset.max = String(n);
		$('cut').hidden = false;
	});
	// markRemoved: this user is no longer a member of chat c (`removed`, or its history refused as
	// forbidden: a reload after the removal with a token whose chats claim still names it).
	function markRemoved(c) {
		const s = chatState.get(c);
		if (!s || s.removed) return;
		s.removed = true;
		s.typing.clear();
		s.users = [];
		const opt = $('chat').querySelector(`option[value="${c}"]`);
		if (opt) {
			opt.disabled = true;
			opt.textContent = `chat ${c} · removed`;
		}
		for (const li of list.querySelectorAll(`li[data-chat="${c}"]`)) {
			li.querySelector('form.edit')?.remove();
			ownControls(li);
		}
		document.body.dataset.removed = chats.filter((x) => chatState.get(x).removed).join(',');
		if (c === chat) showChat();
	}
	own.on('shown', (e) => {
		let unknown = false;
		const s = chatState.get(e.chat_id);
		for (const { id, created_at: at } of e.messages) {
			if (s && at && at > s.shownUpTo) s.shownUpTo = at;
			shownIds.add(id);
			const li = byId.get(id);
			if (!li) unknown = true;
			else if (li.classList.contains('mine') && li.dataset.state === 'sent') setState(li, 'shown');
		}
		if (unknown) refreshNewest(e.chat_id);
	});
	own.on('chat_state', (st) => {
		if (byMembership) addChat(st.chat_id);
		const s = chatState.get(st.chat_id);
		if (!s) return;
		myService = st.me.service;
		// null unread: the gateway did not read this user's state (Postgres busy); keep what we know
		if (st.unread !== null) {
			s.unread = st.unread;
			s.myRead = st.my_read ? st.my_read.seq : 0;
		}
		for (const r of st.reads) s.reads.set(userKey(r.user), r);
		for (const e of st.shown || []) if (e.service !== myService && e.created_at && e.created_at > s.shownUpTo) s.shownUpTo = e.created_at;
		s.users = st.users;
		s.online = st.online ?? st.users.length;
		s.usersNext = st.users_next ?? null;
		renderUnread();
		if (st.chat_id === chat) {
			renderPresence();
			renderReads();
		}
		maybeRead();
	});
	// presence: one change ({user, present}), or a coalesced frame ({joined, left, more}: every change of an
	// interval in a small chat, a sample of at most 20 each in a big one); online is the count after it.
	const byKey = (a, b) => (userKey(a) < userKey(b) ? -1 : 1);
	own.on('presence', (p) => {
		const s = chatState.get(p.chat_id);
		if (!s) return;
		const joined = p.user ? (p.present ? [p.user] : []) : p.joined || [];
		const left = p.user ? (p.present ? [] : [p.user]) : p.left || [];
		const gone = new Set([...joined, ...left].map(userKey));
		// a partial list holds a prefix of the sorted users: a newcomer past its end belongs to a later page
		const last = s.usersNext !== null && s.users.length ? userKey(s.users.at(-1)) : null;
		s.users = [...s.users.filter((u) => !gone.has(userKey(u))), ...joined.filter((u) => last === null || userKey(u) <= last)].sort(byKey);
		if (p.more && s.usersNext === null) s.usersNext = ''; // changes were left out: the list is a sample now
		s.online = p.online ?? s.users.length;
		if (p.chat_id === chat) renderPresence();
	});
	// typing: one user's report, or a big chat's coalesced frame {users:[{user, typing}], more}
	own.on('typing', (t) => {
		const s = chatState.get(t.chat_id);
		if (!s) return;
		for (const { user, typing } of t.users || [{ user: t.user, typing: t.typing }]) {
			if (isMe(user)) continue;
			if (typing) s.typing.set(userKey(user), { user, until: Date.now() + TYPING_SHOWN_MS });
			else s.typing.delete(userKey(user));
		}
		if (t.chat_id === chat) renderTyping();
	});
	// "more…" pages on through a big chat's users (presence {after}); the list grows by a page a click.
	$('presence-more').addEventListener('click', async () => {
		const s = current();
		if (!s || !s.usersNext || s.pagingUsers || !own.connected) return;
		s.pagingUsers = true;
		const at = chat;
		const ack = await own.timeout(REQUEST_TIMEOUT_MS).emitWithAck('presence', { chat_id: at, after: s.usersNext }).catch(() => null);
		s.pagingUsers = false;
		if (!ack || !ack.ok) return;
		const have = new Set(s.users.map(userKey));
		s.users = [...s.users, ...ack.users.filter((u) => !have.has(userKey(u)))].sort(byKey);
		s.usersNext = ack.next;
		s.online = ack.online;
		if (at === chat) renderPresence();
	});
	own.on('read', (r) => {
		const s = chatState.get(r.chat_id);
		if (!s) return;
		s.reads.set(userKey(r.user), r);
		if (isMe(r.user)) s.myRead = Math.max(s.myRead, r.seq);
		if (r.chat_id === chat) renderReads();
	});
	// The presence list is re-read now and then: members of a gateway that was killed expire without an event.
	setInterval(async () => {
		if (!own.connected || chat === null) return;
		const ack = await own.timeout(REQUEST_TIMEOUT_MS).emitWithAck('presence', { chat_id: chat }).catch(() => null);
		if (ack && ack.ok) {
			// the first page again (a big chat's list shrinks back to it; "more…" pages on)
			const s = chatState.get(ack.chat_id);
			Object.assign(s, { users: ack.users, usersNext: ack.next, online: ack.online });
			if (ack.chat_id === chat) renderPresence();
		}
	}, PRESENCE_EVERY_MS);
	own.on('disconnect', (reason) => {
		if (reason === 'io server disconnect') showConn('expired', 'token expired: open a fresh link');
		else if (reason !== 'io client disconnect') showConn('reconnecting', 'reconnecting…');
		sendButton();
	});
	own.io.on('reconnect_attempt', () => {
		if (connState !== 'reconnecting') showConn('reconnecting', 'reconnecting…');
	});
	own.on('connect_error', (err) => {
		if (own.active) {
			if (connState !== 'connecting') showConn('reconnecting', 'reconnecting…');
			return;
		}
		const why = err.data && err.data.reason ? ` (${err.data.reason})` : '';
		showConn('refused', `refused: ${err.message}${why}`);
	});

	// ---- sending ----
	function sendButton() {
		const s = current();
		const closed = !s || s.removed; // no chat to write to yet, or removed from it
		$('send-button').disabled = closed; // written while disconnected, a message waits in the outbox
		$('body').disabled = closed;
	}

	// renderRemoved: the notice of a chat this user was removed from, and no writing there.
	function renderRemoved() {
		const removed = current().removed;
		const others = chats.some((c) => !chatState.get(c).removed);
		$('removed').textContent = removed ? `You are no longer a member of chat ${chat}: nothing new arrives here and you cannot write here` +
			(others ? '. Pick another chat above.' : '.') : '';
		$('removed').hidden = !removed;
		$('removed').dataset.chat = removed ? String(chat) : '';
		sendButton();
	}

	// ---- the outbox: the library's queue of this page's sends ----
	// waitingLi: the element of each queued send, by its queue key (its client_msg_id). The library
	// loads as a module (a classic script imports it); a message written before it loaded waits in
	// early until then.
	const waitingLi = new Map();
	let outbox = null;
	const early = [];
	const queueName = `chat_outbox:${location.host}:${claim.sub || ''}:${claim.chats ? claim.chats.join(',') : ''}`;
	import('./chat_client.js').then(({ ChatClient, WebStorageStore }) => {
		outbox = new ChatClient({ socket: own, store: new WebStorageStore(localStorage, queueName),
			ackTimeoutMs: SEND_TIMEOUT_MS, minBackoffMs: 250, maxBackoffMs: 5000 });
		outbox.on('acked', acked).on('refused', refused);
		// what was waiting when the page was closed or reloaded
		for (const r of outbox.pending()) if (r.kind === 'send') waiting(r, element(true, r.chat_id, r.body));
		outbox.connect();
		for (const [li, body, chatId] of early.splice(0)) waiting(outbox.send(chatId, body), li);
	}, (e) => problem(`the client library did not load: ${e.message}`));

	function waiting(r, li) {
		li.dataset.key = r.key;
		waitingLi.set(r.key, li);
		setState(li, 'waiting');
		place(li);
	}

	function send(li, body, chatId) {
		setState(li, 'waiting');
		if (!outbox) return early.push([li, body, chatId]);
		waiting(outbox.send(chatId, body), li);
	}

	function acked(r, m) {
		const li = waitingLi.get(r.key);
		if (!li) return;
		waitingLi.delete(r.key);
		const already = byId.get(m.id);
		if (already && already !== li) already.remove(); // it came as `sent` first: keep this element, with its story
		setMessage(li, m);
		setState(li, 'sent');
		ownControls(li);
		if (shownIds.has(m.id)) setState(li, 'shown');
		place(li);
		renderReads();
	}

	function refused(r, e) {
		const li = waitingLi.get(r.key);
		if (!li) return;
		waitingLi.delete(r.key);
		setState(li, 'failed', [e.message || 'refused', e.sqlstate && `(${e.sqlstate})`, e.hint].filter(Boolean).join(' '));
	}

	$('send').addEventListener('submit', (ev) => {
		ev.preventDefault();
		const body = $('body').value;
		if (!body.trim() || !current() || current().removed) return;
		$('body').value = '';
		if (lastTyping && own.connected && claim.sub) own.emit('typing', { chat_id: chat, typing: false });
		lastTyping = 0;
		const li = element(true, chat, body);
		place(li);
		scrollToEnd();
		send(li, body, chat);
	});
	$('body').addEventListener('keydown', (ev) => {
		if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
			ev.preventDefault();
			$('send').requestSubmit();
		}
	});

	for (const c of chats) $('chat').add(new Option(`chat ${c}`, String(c), false, c === chat));
	$('chat-pick').hidden = chats.length < 2;
	$('chat').addEventListener('change', () => {
		chat = Number($('chat').value);
		picked = true;
		showChat();
	});
	showChat();
	sendButton();
})();
