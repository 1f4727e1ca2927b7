// tests/ha/verdict.mjs - what the HA suites assert about what a client was shown.
//   shownOnce({ saved, byId, seen }) -> { lost, twice, order, outOfOrder, text }
//     saved: Map n -> message id of every committed send; byId: id -> n; seen: the client's messages
//   finish(failures)  prints FAIL with the reasons (exit 1) or PASS (exit 0)

export function shownOnce({ saved, byId, seen }) {
	const shownIds = seen.map((m) => m.id);
	const lost = [...saved.entries()].filter(([, id]) => !shownIds.includes(id)).map(([n]) => n);
	const twice = [...new Set(shownIds.filter((id, i) => shownIds.indexOf(id) !== i))].map((id) => byId.get(id));
	const order = seen.map((m) => byId.get(m.id));
	const outOfOrder = order.some((n, i) => i > 0 && n < order[i - 1]);
	const text = `shown ${shownIds.length}; lost: ${lost.join(' ') || 'none'}; twice: ${twice.join(' ') || 'none'}; ` +
		`order: ${outOfOrder ? order.join(' ') : 'kept'}`;
	const failures = [];
	if (lost.length) failures.push(`lost messages ${lost.join(' ')}`);
	if (twice.length) failures.push(`shown twice: ${twice.join(' ')}`);
	if (outOfOrder) failures.push('shown out of order');
	return { failures, text };
}

export function finish(failures) {
	if (failures.length) {
		console.log(`FAIL: ${failures.join('; ')}`);
		process.exit(1);
	}
	console.log('PASS');
	process.exit(0);
}
