// tests/gateway/timeouts.mjs - deadlines that protect the gateway from stalled peers:
//   - a client that probes the WebSocket upgrade ("2probe") and never sends "5" has the probe
//     dropped after --upgrade-timeout; its polling session goes on, and a later upgrade succeeds;
//   - a /ws client that never answers WebSocket pings is closed ("ping timeout"), one that does
//     (every browser and library by default) stays.
// The daemon runs with --ping-interval 1500 --ping-timeout 1500 --upgrade-timeout 500 (tests.cmake):
// a paused client does not poll, so the probe must end before a ping would go unanswered.
import WebSocket from 'ws';
import { PORT, URL, check, finish, token, waitFor, wsClient } from './peer_lib.mjs';

const RS = '\x1e';
const pollUrl = (sid) => `${URL}/socket.io/?EIO=4&transport=polling${sid ? `&sid=${sid}` : ''}`;
async function poll(sid) {
	const r = await fetch(pollUrl(sid));
	return { status: r.status, packets: (await r.text()).split(RS) };
}
async function post(sid, ...packets) {
	const r = await fetch(pollUrl(sid), { method: 'POST', body: packets.join(RS), headers: { 'content-type': 'text/plain;charset=UTF-8' } });
	return r.status;
}
// probe opens the upgrade WebSocket for sid, sends 2probe and resolves once 3probe arrived.
function probe(sid) {
	const ws = new WebSocket(`ws://127.0.0.1:${PORT}/socket.io/?EIO=4&transport=websocket&sid=${sid}`);
	ws.got = [];
	ws.closed = false;
	ws.on('message', (d) => ws.got.push(d.toString()));
	ws.on('close', () => { ws.closed = true; });
	ws.on('error', () => {});
	ws.on('open', () => ws.send('2probe'));
	return ws;
}

// A polling session that joins "/".
const open = await poll();
const sid = JSON.parse(open.packets[0].slice(1)).sid;
check('polling handshake', open.status === 200 && !!sid, open.packets[0]);
check('namespace CONNECT posted', (await post(sid, `40${JSON.stringify({ token: token([5]) })}`)) === 200);
const joined = await poll(sid);
check('CONNECT answered over polling', joined.packets.some((p) => p.startsWith('40{')), joined.packets.join(' | '));

// Probe, then stall: never send "5".
const stalled = probe(sid);
await waitFor('3probe', () => stalled.got.includes('3probe'));
check('probe answered with 3probe', stalled.got.includes('3probe'));
await waitFor('the stalled probe to be dropped', () => stalled.closed);
check('a probe that never sends 5 is dropped after --upgrade-timeout', stalled.closed);

// The polling session is still alive: the server keeps pinging it there.
let sawPing = false;
for (let i = 0; i < 20 && !sawPing; i++) {
	const r = await poll(sid);
	if (r.status !== 200) break;
	if (r.packets.includes('2')) {
		sawPing = true;
		await post(sid, '3');
	}
}
check('the session goes on over polling after the dropped probe', sawPing);

// And it can still upgrade.
const good = probe(sid);
await waitFor('3probe on the second probe', () => good.got.includes('3probe'));
const released = await poll(sid); // the server releases the paused client's GET
check('held GET released during the upgrade', released.status === 200, released.packets.join(' | '));
good.send('5');
await waitFor('a ping over the upgraded WebSocket', () => good.got.includes('2'));
check('a later upgrade completes and carries the heartbeat', good.got.includes('2'), good.got.join(' | '));
good.send('3');
check('polling is refused once upgraded', (await poll(sid)).status === 400);
good.close();

// /ws: a peer that answers pings stays; one that does not is closed.
const alive = wsClient(`?token=${token([6])}`);
const mute = new WebSocket(`ws://127.0.0.1:${PORT}/ws?token=${token([6])}`, { autoPong: false });
mute.closed = null;
mute.on('close', (code, reason) => { mute.closed = { code, reason: reason.toString() }; });
mute.on('error', () => {});
await waitFor('the silent /ws peer to be closed', () => mute.closed !== null);
check('a /ws peer that never answers pings is closed', mute.closed?.reason === 'ping timeout', JSON.stringify(mute.closed));
check('a /ws peer that answers pings stays open', alive.readyState === WebSocket.OPEN && alive.closed === null);
alive.close();
finish();
