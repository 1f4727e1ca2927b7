// tests/ha/verdict.mjs - what the HA suites assert about what a client was shown.
//   shownOnce({ saved, byId, seen }) -> { failures, text, counts }
//     saved: Map n -> message id of every committed send; byId: id -> n; seen: the client's messages
//     counts: { lost, twice, reordered }, reordered = messages shown after one sent later
//   finish(failures)  prints FAIL with the reasons (exit 1) or PASS (exit 0)

// ranges([3, 4, 5, 9, 1]) -> '3-5 9 1': message numbers as a verdict names them, in their order, runs joined (a
// failover can lose hundreds in a row)
const ranges = (ns) => ns.reduce((acc, n) => {
	const last = acc[acc.length - 1];
	if (last && n === last[1] + 1) last[1] = n;
	else acc.push([n, n]);
	return acc;
}, []).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(' ');

export function shownOnce({ saved, byId, seen }) {
	const shownIds = seen.map((m) => m.id);
	const lost = [...saved.entries()].filter(([, id]) => !shownIds.includes(id)).map(([n]) => n);
	const twice = [...new Set(shownIds.filter((id, i) => shownIds.indexOf(id) !== i))].map((id) => byId.get(id));
	const order = seen.map((m) => byId.get(m.id));
	const reordered = order.filter((n, i) => i > 0 && n < order[i - 1]).length;
	const outOfOrder = reordered > 0;
	const text = `shown ${shownIds.length}; lost: ${ranges(lost) || 'none'}; twice: ${twice.join(' ') || 'none'}; ` +
		`order: ${outOfOrder ? ranges(order) : 'kept'}`;
	const failures = [];
	if (lost.length) failures.push(`lost ${lost.length} messages: ${ranges(lost)}`);
	if (twice.length) failures.push(`shown twice: ${twice.join(' ')}`);
	if (outOfOrder) failures.push('shown out of order');
	return { failures, text, counts: { lost: lost.length, twice: twice.length, reordered } };
}

export function finish(failures) {
	if (failures.length) {
		console.log(`FAIL: ${failures.join('; ')}`);
		process.exit(1);
	}
	console.log('PASS');
	process.exit(0);
}
