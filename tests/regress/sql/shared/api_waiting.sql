-- tests/regress/sql/shared/api_waiting.sql - the API both installs share: changes that wait for their
-- message. A change (edit or delete) whose message is not in the inbox yet waits in
-- <service>.inbox_waiting; the message, when it comes, takes the state after its changes, in the same
-- statement as them or a later one, and nothing is left waiting. inbox_apply runs for every change and
-- for a message only while a change waits: its calls are counted by pg_stat_xact_user_functions
-- (track_functions = 'pl', set by the caller), before and after each insert of one transaction, so
-- each count is that insert's own (a backend's counts are flushed between transactions only).
-- Rows as chat-outboxd inserts them (inbox_sql.cpp), in chat 11; an event's message_id is its own id.
\set c1 00000000-0000-4000-8000-0000000000c1
\set c2 00000000-0000-4000-8000-0000000000c2
\set c3 00000000-0000-4000-8000-0000000000c3
\set c4 00000000-0000-4000-8000-0000000000c4
\set c5 00000000-0000-4000-8000-0000000000c5
SHOW track_functions;
SELECT count(*) AS waiting_at_start FROM workers.inbox_waiting;
-- calls: inbox_apply's calls so far in this transaction
PREPARE calls AS SELECT coalesce(sum(f.calls), 0) AS calls FROM pg_stat_xact_user_functions f
	WHERE f.funcid = 'workers.inbox_apply()'::regprocedure;
-- state: chat 11's rows in seq order, each named by the last two digits of its id
PREPARE state AS SELECT right(message_id::text, 2) AS id, right(target::text, 2) AS target, kind, version, body,
	edited_at IS NOT NULL AS edited, deleted_at IS NOT NULL AS deleted
FROM workers.inbox WHERE chat_id = 11 ORDER BY seq;

-- nothing waits: plain messages, a batch and a single one, run no trigger function
BEGIN;
EXECUTE calls \gset before_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	SELECT gen_random_uuid(), 11, 'plain', now(), 'alice' FROM generate_series(1, 100)
	ON CONFLICT (message_id) DO NOTHING;
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	VALUES ('00000000-0000-4000-8000-0000000000f0', 11, 'plain', now(), 'alice') ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_
SELECT :after_calls - :before_calls AS calls_for_101_plain_messages;
COMMIT;
DELETE FROM workers.inbox WHERE chat_id = 11;

-- an edit and a delete before their message, each its own statement: each change waits; a plain
-- message then runs the trigger (a change waits) and keeps its own state; the message arrives deleted
-- and takes the waiting rows with it; a plain message after that runs no trigger function again
BEGIN;
EXECUTE calls \gset before_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at)
	VALUES ('00000000-0000-4000-8000-0000000000d1', 11, 'v1', NULL, 'alice', :'c1', 'edited', 1, now()) ON CONFLICT (message_id) DO NOTHING;
SELECT right(target::text, 2) AS waiting FROM workers.inbox_waiting;
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, deleted_at)
	VALUES ('00000000-0000-4000-8000-0000000000d2', 11, '', NULL, 'alice', :'c1', 'deleted', 2, now()) ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_changes_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	VALUES ('00000000-0000-4000-8000-0000000000f1', 11, 'plain', now(), 'alice') ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_plain_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	VALUES (:'c1', 11, 'v0', now(), 'alice') ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_message_
SELECT count(*) AS waiting_after_the_message FROM workers.inbox_waiting;
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	VALUES ('00000000-0000-4000-8000-0000000000f2', 11, 'plain', now(), 'alice') ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_
SELECT :after_changes_calls - :before_calls AS calls_for_2_changes, :after_plain_calls - :after_changes_calls AS calls_for_a_plain_message_while_one_waits,
	:after_message_calls - :after_plain_calls AS calls_for_their_message, :after_calls - :after_message_calls AS calls_for_a_plain_message_after;
COMMIT;
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 11;

-- the same in one statement, after a plain message: the first change turns the trigger on for the
-- rest of the statement, so the message after it takes their state; nothing is left waiting
BEGIN;
EXECUTE calls \gset before_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at, deleted_at) VALUES
	('00000000-0000-4000-8000-0000000000f3', 11, 'plain', now(), 'alice', NULL, NULL, 0, NULL, NULL),
	('00000000-0000-4000-8000-0000000000d3', 11, 'v1', NULL, 'alice', :'c2', 'edited', 1, now(), NULL),
	('00000000-0000-4000-8000-0000000000d4', 11, '', NULL, 'alice', :'c2', 'deleted', 2, NULL, now()),
	(:'c2', 11, 'v0', now(), 'alice', NULL, NULL, 0, NULL, NULL),
	('00000000-0000-4000-8000-0000000000f4', 11, 'plain', now(), 'alice', NULL, NULL, 0, NULL, NULL)
	ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_
SELECT :after_calls - :before_calls AS calls_for_the_statement_of_5_rows;
COMMIT;
SELECT count(*) AS waiting_after_the_statement FROM workers.inbox_waiting;
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 11;
-- two edits out of order, then their message, in one statement: the message takes the newer one
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at) VALUES
	('00000000-0000-4000-8000-0000000000d6', 11, 'v2', NULL, 'alice', :'c3', 'edited', 2, now()),
	('00000000-0000-4000-8000-0000000000d5', 11, 'v1', NULL, 'alice', :'c3', 'edited', 1, now()),
	(:'c3', 11, 'v0', now(), 'alice', NULL, NULL, 0, NULL)
	ON CONFLICT (message_id) DO NOTHING;
SELECT count(*) AS waiting_after_the_statement FROM workers.inbox_waiting;
EXECUTE state;
DELETE FROM workers.inbox WHERE chat_id = 11;

-- a change whose message never comes waits until it leaves the inbox (the relay's purge deletes it);
-- a rolled-back change never waited, and the next message runs no trigger function
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at)
	VALUES ('00000000-0000-4000-8000-0000000000d7', 11, 'v1', NULL, 'alice', :'c4', 'edited', 1, now()) ON CONFLICT (message_id) DO NOTHING;
SELECT right(target::text, 2) AS waiting, since IS NOT NULL AS since FROM workers.inbox_waiting;
DELETE FROM workers.inbox WHERE message_id = '00000000-0000-4000-8000-0000000000d7';
SELECT count(*) AS waiting_after_its_change_left FROM workers.inbox_waiting;
BEGIN;
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender, target, kind, version, edited_at)
	VALUES ('00000000-0000-4000-8000-0000000000d8', 11, 'v1', NULL, 'alice', :'c5', 'edited', 1, now()) ON CONFLICT (message_id) DO NOTHING;
SELECT count(*) AS waiting_in_the_transaction FROM workers.inbox_waiting;
ROLLBACK;
SELECT count(*) AS waiting_after_rollback FROM workers.inbox_waiting;
BEGIN;
EXECUTE calls \gset before_
INSERT INTO workers.inbox (message_id, chat_id, body, created_at, sender)
	VALUES ('00000000-0000-4000-8000-0000000000f5', 11, 'plain', now(), 'alice') ON CONFLICT (message_id) DO NOTHING;
EXECUTE calls \gset after_
SELECT :after_calls - :before_calls AS calls_for_a_plain_message_after_rollback;
COMMIT;
DELETE FROM workers.inbox WHERE chat_id = 11;
DEALLOCATE calls;
DEALLOCATE state;
