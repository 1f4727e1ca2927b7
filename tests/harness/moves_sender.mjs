// tests/harness/moves_sender.mjs <url> <phase> <count> <chats> <file> - the sender of a moved database
// (tests/harness/moves.sh, moves_sender_start): <count> consumers.send_message, one transaction each,
// message n to chat n mod <chats> + 1, on one connection; appends "<id> <chat_id> <phase>" per message
// sent to <file>. A send refused with SQLSTATE 55000 because the outbox came from another database
// (not rebased yet) is tried again 50 ms later and counted in <file>.refused; any other error, or
// refusals for 60 s, end it with status 1.
import { appendFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';

const [url, phase, count, chats, file] = process.argv.slice(2);
const client = new pg.Client({ connectionString: url });
await client.connect();
writeFileSync(`${file}.refused`, '');
const deadline = Date.now() + 60000;
for (let n = 0; n < Number(count); n++) {
	for (;;) {
		try {
			const r = await client.query('SELECT id, chat_id FROM consumers.send_message($1, $2)', [n % Number(chats) + 1, `${phase} ${n}`]);
			appendFileSync(file, `${r.rows[0].id} ${r.rows[0].chat_id} ${phase}\n`);
			break;
		} catch (e) {
			if (e.code !== '55000' || !/came from another database and is not rebased yet/.test(e.message)) {
				console.error(`send ${n}: ${e.code} ${e.message}`);
				process.exit(1);
			}
			appendFileSync(`${file}.refused`, 'refused\n');
			if (Date.now() > deadline) {
				console.error(`send ${n}: still refused after 60 s`);
				process.exit(1);
			}
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
	}
}
await client.end();
console.log(`sent ${count}`);
