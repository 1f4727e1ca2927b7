-- tests/regress/sql/shared/roles_members.sql - the API both installs share, part 5: chat membership
-- (sql/parts/members.sql) and who may change it (after roles_receiver.sql). Included (\ir) by
-- tests/regress/sql/roles.sql (the extension) and tests/managed/api.sql (the managed install).
RESET search_path;
RESET ROLE;

-- the application's role (grant_service) changes membership, one by one or in bulk
SET ROLE consumers_app;
SELECT chat_outbox.add_member(10, 'alice') AS added, chat_outbox.add_member(10, 'alice') AS again;
SELECT chat_outbox.add_member(10, 'bob'), chat_outbox.add_member(11, 'bob');
INSERT INTO chat_outbox.members (chat_id, user_id) SELECT 12, 'user-' || i FROM generate_series(1, 100) i;
SELECT chat_outbox.remove_member(10, 'bob') AS removed, chat_outbox.remove_member(10, 'bob') AS again;
DELETE FROM chat_outbox.members WHERE chat_id = 12 AND user_id <> 'user-1';
SELECT chat_id, user_id FROM chat_outbox.members ORDER BY chat_id, user_id;
-- hostile user ids: each refused with the user id rule, nothing written
SELECT chat_outbox.add_member(10, '');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(10, repeat('x', 10240));
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(10, 'a' || chr(1) || 'b');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(10, 'a' || chr(0) || 'b');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(10, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(NULL, 'alice');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.remove_member(10, repeat('x', 10240));
\echo :LAST_ERROR_SQLSTATE
-- in bulk the table's CHECK holds the same rule (terse: the failing row's detail carries the time)
\set VERBOSITY terse
INSERT INTO chat_outbox.members (chat_id, user_id) VALUES (10, '');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO chat_outbox.members (chat_id, user_id) VALUES (10, repeat('x', 10240));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO chat_outbox.members (chat_id, user_id) VALUES (10, E'tab\there');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT count(*) AS members FROM chat_outbox.members;
RESET ROLE;

-- the receiving daemon's role reads membership and cannot change it; its gateway's sends check it
-- (check_member, whose race with remove_member is tests/regress/specs/member_send_race.spec)
SET ROLE consumers_daemon;
SELECT count(*) AS members_seen FROM chat_outbox.members WHERE chat_id = 10;
SELECT chat_outbox.check_member(10, 'alice') AS alice_is_member;
SELECT chat_outbox.check_member(10, 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT chat_outbox.add_member(10, 'mallory');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO chat_outbox.members (chat_id, user_id) VALUES (10, 'mallory');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DELETE FROM chat_outbox.members;
