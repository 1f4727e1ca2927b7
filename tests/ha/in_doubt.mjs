// tests/ha/in_doubt.mjs - a COMMIT left in doubt at a failover (docs/ha.md, "The in-doubt COMMIT").
//
//   commitInDoubt({ url, chat, body, stopStandby, killPrimary, query }) -> the error the sender saw
//     stops the synchronous standby (so it never confirms), sends `body` to chat `chat` with
//     consumers.send_message on `url` (autocommit: its COMMIT waits for the standby), waits until
//     Postgres shows that COMMIT waiting (wait_event SyncRep), then kills the primary. The commit
//     record is in the primary's WAL and in no standby's: whether the message exists depends on
//     which node leads next, and the sender cannot tell from its answer.
//   findSent({ url, chat, body, query }) -> the ids of messages with that body in that chat on `url`:
//     the lookup docs/ha.md tells a sender to make before it sends again.
// query(url, sql, params) runs one statement on a fresh connection (pg_failover.mjs's).
import { execSync } from 'node:child_process';
import pg from 'pg';
import { waitUntil } from '../faults/procs.mjs';

export async function commitInDoubt({ url, chat, body, stopStandby, killPrimary, query }) {
	execSync(stopStandby, { stdio: 'ignore' });
	const sender = new pg.Client({ connectionString: url });
	sender.on('error', () => {});
	await sender.connect();
	const answer = sender.query('SELECT id FROM consumers.send_message($1, $2)', [chat, body])
		.then(() => null, (e) => e.message);
	await waitUntil('the COMMIT to wait for the synchronous standby', async () =>
		(await query(url, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep'"))[0].n > 0, 15000);
	execSync(killPrimary, { stdio: 'ignore' });
	const error = await answer;
	sender.end().catch(() => {});
	if (error === null) throw new Error('the held COMMIT was answered: it did not wait for the standby');
	return error;
}

export async function findSent({ url, chat, body, query }) {
	return (await query(url, 'SELECT id FROM consumers.messages WHERE chat_id = $1 AND body = $2', [chat, body])).map((r) => r.id);
}
