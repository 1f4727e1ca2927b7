// tests/faults/soak_lib_test.mjs - the pure parts of soak_lib.mjs (node --test; CTest faults.soak_lib).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silenceSpan, gapTable, gapBounds, Shown } from './soak_lib.mjs';

const longestSilence = (arrivals, from, to) => silenceSpan(arrivals, from, to)?.ms ?? null;

test('the silence runs from the last arrival before the fault', () => {
	// shown at 0, 100, 200; fault at 250; nothing until 3200; whole again at 3000
	assert.equal(longestSilence([0, 100, 200, 3200, 3250], 250, 3000), 3000);
});

test('the longest pause inside the window counts, up to the first arrival after it is whole', () => {
	assert.equal(longestSilence([0, 1000, 1100, 5100, 5200, 9000], 500, 5150), 4000);
	// the pause after the first arrival past the window is not the fault's
	assert.equal(longestSilence([0, 1000, 1100, 1200, 9000], 500, 1150), 1000);
});

test('no arrival before the fault: the silence starts at the fault', () => {
	assert.equal(longestSilence([700, 800], 500, 600), 200);
});

test('nothing shown after the topology was whole: null (never caught up)', () => {
	assert.equal(longestSilence([0, 100], 200, 1000), null);
	assert.equal(longestSilence([], 0, 10), null);
});

test('silenceSpan: where the longest silence lay, from the last message shown before the fault', () => {
	// shown every 20 ms until 1000; killed at 1010; the first message after at 7900, whole at 9000
	const arrivals = [960, 980, 1000, 7900, 7920, 9100];
	assert.deepEqual(silenceSpan(arrivals, 1010, 9000), { ms: 6900, start: 1000, end: 7900 });
	// a message in flight shown just after the kill does not end the gap: the longer pause after it counts
	assert.deepEqual(silenceSpan([1000, 1030, 6000, 9100], 1010, 9000), { ms: 4970, start: 1030, end: 6000 });
	assert.equal(silenceSpan([1000], 1010, 9000), null);
});

test('gapTable: per fault and client kind, every round and the largest; never caught up is Infinity', () => {
	const t = gapTable([
		{ fault: 'redis', kind: '/ws', ms: 3000 }, { fault: 'redis', kind: 'socket.io', ms: 3500 },
		{ fault: 'pg', kind: '/ws', ms: 7000 }, { fault: 'redis', kind: '/ws', ms: 4100 },
		{ fault: 'pg', kind: '/ws', ms: Infinity },
	]);
	assert.deepEqual([...t.keys()], ['redis', 'pg']);
	assert.deepEqual(t.get('redis').get('/ws'), { rounds: [3000, 4100], max: 4100 });
	assert.deepEqual(t.get('redis').get('socket.io'), { rounds: [3500], max: 3500 });
	assert.equal(t.get('pg').get('/ws').max, Infinity);
});

test('gapBounds: key=seconds pairs in ms; none when empty; a bad pair is refused', () => {
	assert.deepEqual([...gapBounds('redis-master=5,pg-machine=8.5')], [['redis-master', 5000], ['pg-machine', 8500]]);
	assert.equal(gapBounds('').size, 0);
	assert.throws(() => gapBounds('redis-master:5'), /redis-master:5/);
});

test('Shown: messages and their changes, each once and in order', () => {
	const s = new Shown();
	s.message({ id: 'a', seq: '1', body: 'c1 #0' });
	s.message({ id: 'b', seq: '2', body: 'c1 #1' });
	s.change({ id: 'a', seq: '3' });
	s.change({ id: 'b', seq: '4' });
	s.message({ id: 'c', seq: '5', body: 'c1 #2 edited' }); // reached the inbox after its edit
	s.message({ id: 'd', seq: '6', body: null }); // deleted before it was shown
	assert.equal(s.chatOrder + s.seqOrder + s.twice(), 0);
	assert.equal(s.lastSeq, 6);
	assert.equal(s.missing([{ id: 'a', version: 1 }, { id: 'b', version: 1 }, { id: 'c', version: 0 }, { id: 'd', version: 1 }]), 1); // d's delete
	assert.equal(s.missing([{ id: 'a', version: 2 }, { id: 'z', version: 1 }]), 3); // a's second change, z and its change
});

test('Shown: repeats are twice, a change before its message and a lower k are out of order', () => {
	const s = new Shown();
	s.message({ id: 'a', seq: '1', body: 'c1 #5' });
	s.message({ id: 'a', seq: '1', body: 'c1 #5' });
	s.change({ id: 'x', seq: '2' });
	s.change({ id: 'x', seq: '2' });
	s.message({ id: 'b', seq: '3', body: 'c1 #4' });
	assert.equal(s.twice(), 2);
	assert.equal(s.chatOrder, 2);
	s.message({ id: 'c', seq: '2', body: 'c2 #0' });
	assert.equal(s.seqOrder, 1);
});
