-- tests/regress/sql/shared/api_edits.sql - the API both installs share: edits and deletes.
-- edit_message and delete_message change a message of their own service and write one outbox
-- event each (message.edited / message.deleted, its own id, the message's id in message_id, a version);
-- every refusal has its SQLSTATE and writes nothing. Then the receiver's side: inbox rows inserted
-- the way chat-outboxd inserts them, in every order the jobs may arrive in, end in one state.
-- messages with known ids (errors name them), as send_message stores them
\set m1 00000000-0000-4000-8000-0000000000a1
\set m2 00000000-0000-4000-8000-0000000000a2
\set w1 00000000-0000-4000-8000-0000000000b1
INSERT INTO consumers.messages (id, chat_id, body, sender) VALUES (:'m1', 7, 'first text', 'alice'), (:'m2', 7, 'no sender', NULL);
INSERT INTO workers.messages (id, chat_id, body) VALUES (:'w1', 7, 'a workers message');

-- an edit: the row changes, and one event carries the new body and the next version
SELECT body, edited_at IS NOT NULL AS edited, deleted_at, version, sender
FROM consumers.edit_message(:'m1', 'second text', 'alice');
SELECT event, payload ->> 'message_id' = :'m1' AS names_message, payload ->> 'id' <> :'m1' AS own_id,
	payload ->> 'body' AS body, payload ->> 'version' AS version, payload ->> 'sender' AS sender,
	payload ? 'edited_at' AS has_edited_at, payload ->> 'chat_id' AS chat_id
FROM consumers.outbox ORDER BY id DESC LIMIT 1;
-- without a sender anybody the function is granted to may change the message
SELECT body, version FROM consumers.edit_message(:'m1', 'third text');

-- bad input: each refused with its SQLSTATE, and nothing written
SELECT count(*) AS outbox_before FROM consumers.outbox \gset
SELECT * FROM consumers.edit_message(:'m1', 'x', 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message(:'m2', 'x', 'alice');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message('00000000-0000-4000-8000-00000000dead', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message(NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message(:'m1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message(:'m1', '');
\echo :LAST_ERROR_SQLSTATE
-- a 10-MB body: over max_body_bytes, as in send_message
SELECT * FROM consumers.edit_message(:'m1', repeat('x', 10 * 1024 * 1024));
\echo :LAST_ERROR_SQLSTATE
-- hostile ids: not a uuid; a uuid of the other service's message
SELECT * FROM consumers.edit_message('not-a-uuid', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.edit_message(:'w1', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.delete_message(:'w1');
\echo :LAST_ERROR_SQLSTATE
-- hostile senders: the rule of send_message
SELECT * FROM consumers.delete_message(:'m1', '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.delete_message(:'m1', repeat('x', 10240));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.delete_message(:'m1', 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) - :outbox_before AS written_by_bad_input FROM consumers.outbox;
SELECT body, version FROM consumers.messages WHERE id = :'m1';

-- a delete: the body is gone, the event has none; a deleted message cannot change again (a delete
-- of it again, by its sender or without one, answers it as it is: api_client_msg_id.sql)
SELECT body, deleted_at IS NOT NULL AS deleted, version FROM consumers.delete_message(:'m1', 'alice');
SELECT event, payload ->> 'message_id' = :'m1' AS names_message, payload ? 'body' AS has_body,
	payload ->> 'version' AS version, payload ? 'deleted_at' AS has_deleted_at
FROM consumers.outbox ORDER BY id DESC LIMIT 1;
SELECT * FROM consumers.edit_message(:'m1', 'after the delete', 'alice');
\echo :LAST_ERROR_SQLSTATE
SELECT body, deleted_at IS NOT NULL AS deleted, version FROM consumers.delete_message(:'m1');

-- The receiver: rows as chat-outboxd inserts them (inbox_sql.cpp), an event's message_id its own id.
-- apply <tag> <event_id> <kind> <version> <body>: one event of message :msg (chat 9)
PREPARE apply(text, uuid, text, int, text) AS
	INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at, deleted_at)
	VALUES ($2, 9, coalesce($5, ''), NULL, 'alice', CASE WHEN $3 IS NULL THEN NULL ELSE '00000000-0000-4000-8000-0000000000aa'::uuid END,
		$3, $4, CASE WHEN $3 = 'edited' THEN now() END, CASE WHEN $3 = 'deleted' THEN now() END)
	ON CONFLICT (message_id) DO NOTHING;
-- state: the message's row and every row of its events
PREPARE state AS SELECT message_id = '00000000-0000-4000-8000-0000000000aa' AS is_message, kind, version, body,
	edited_at IS NOT NULL AS edited, deleted_at IS NOT NULL AS deleted
FROM workers.inbox WHERE chat_id = 9 ORDER BY seq;
-- in order: the message, edit 1, edit 2; each applied once however often it comes
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE apply('e2', '00000000-0000-4000-8000-0000000000e2', 'edited', 2, 'v2');
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 9;
-- edit 2 before edit 1 (a retried job): the older edit never wins, its row shows the newer body
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE apply('e2', '00000000-0000-4000-8000-0000000000e2', 'edited', 2, 'v2');
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 9;
-- an edit before its message: the message arrives in its edited state
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 9;
-- a delete racing an edit, both ways: the delete wins, no body is left on any row
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE apply('d', '00000000-0000-4000-8000-0000000000dd', 'deleted', 2, NULL);
EXECUTE apply('d', '00000000-0000-4000-8000-0000000000dd', 'deleted', 2, NULL);
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 9;
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE apply('d', '00000000-0000-4000-8000-0000000000dd', 'deleted', 2, NULL);
EXECUTE apply('e1', '00000000-0000-4000-8000-0000000000e1', 'edited', 1, 'v1');
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 9;
-- a delete before its message: the message arrives deleted, without its body
EXECUTE apply('d', '00000000-0000-4000-8000-0000000000dd', 'deleted', 2, NULL);
EXECUTE apply('m', '00000000-0000-4000-8000-0000000000aa', NULL, 0, 'v0');
EXECUTE state;
-- a read cursor names a message, never an event row: read up to the message's seq, whatever came after it
SELECT cursor_message_id = '00000000-0000-4000-8000-0000000000aa' AS names_the_message, moved
FROM workers.mark_read(9, 'reader', (SELECT max(seq) FROM workers.inbox WHERE chat_id = 9));
DELETE FROM workers.read_cursors WHERE chat_id = 9;
DELETE FROM workers.inbox WHERE chat_id = 9;
DEALLOCATE apply;
DEALLOCATE state;
