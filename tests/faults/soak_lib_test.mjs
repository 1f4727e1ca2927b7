// tests/faults/soak_lib_test.mjs - the pure parts of soak_lib.mjs (node --test; CTest faults.soak_lib).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { longestSilence } from './soak_lib.mjs';

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
