-- tests/regress/sql/shared/api_client_msg_id.sql - the API both installs share: send_message's
-- client_msg_id (one message per (chat, sender, key), a repeat answered with it, a changed body
-- refused) and the idempotent edit and delete.
SELECT count(*) AS messages_before FROM consumers.messages \gset
SELECT count(*) AS events_before FROM consumers.outbox \gset
SELECT id AS k1, created_at AS k1_at FROM consumers.send_message(7, 'once', 'alice', client_msg_id => 'key-1') \gset
-- the key travels in the event
SELECT payload ->> 'client_msg_id' AS key, payload ->> 'id' = :'k1' AS names_message
FROM consumers.outbox ORDER BY id DESC LIMIT 1;
-- the same key again: the first message, nothing written, the repeat marked for the gateway
SELECT id = :'k1' AS same_id, created_at = :'k1_at' AS same_row, body,
	current_setting('chat_outbox_send.repeat', true) = :'k1' AS marked_repeat
FROM consumers.send_message(7, 'once', 'alice', client_msg_id => 'key-1');
-- positional, as the gateway calls it
SELECT id = :'k1' AS same_id FROM consumers.send_message(7, 'once', 'alice', 'key-1');
-- another body with the same key: refused with its own SQLSTATE
-- (terse: its detail names the message's random id)
\set verbosity_before :VERBOSITY
\set VERBOSITY terse
SELECT * FROM consumers.send_message(7, 'twice?', 'alice', client_msg_id => 'key-1');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY :verbosity_before
-- the key is the sender's and the chat's: another sender's, or another chat, is another message
SELECT id <> :'k1' AS bobs_own FROM consumers.send_message(7, 'once', 'bob', client_msg_id => 'key-1');
SELECT id <> :'k1' AS other_chat FROM consumers.send_message(8, 'once', 'alice', client_msg_id => 'key-1');
-- without a sender the key is the caller's (the service's) in that chat
SELECT id AS n1 FROM consumers.send_message(7, 'no sender', client_msg_id => 'key-1') \gset
SELECT id = :'n1' AS same_id FROM consumers.send_message(7, 'no sender', NULL, 'key-1');
-- bad keys: 1 to 64 bytes, no control characters
SELECT * FROM consumers.send_message(7, 'x', 'alice', '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(7, 'x', 'alice', repeat('k', 65));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM consumers.send_message(7, 'x', 'alice', E'a\tb');
\echo :LAST_ERROR_SQLSTATE
SELECT id AS e1 FROM consumers.send_message(7, 'x', 'alice', repeat('é', 32)) \gset
SELECT octet_length(client_msg_id), sender, body_md5 = md5('x') AS body_md5 FROM consumers.client_msg_ids WHERE message_id = :'e1';
-- without a key every call is a new message, and its event has no client_msg_id
SELECT count(*) FROM consumers.send_message(7, 'plain') a, consumers.send_message(7, 'plain') b;
SELECT count(*) FILTER (WHERE payload ? 'client_msg_id') AS with_key FROM consumers.outbox
WHERE payload ->> 'body' = 'plain';
SELECT count(*) - :messages_before AS messages, (SELECT count(*) FROM consumers.outbox) - :events_before AS events
FROM consumers.messages;
-- an edit to the body it has writes nothing, a delete of a deleted message neither; the key still
-- answers the message (deleted now, its body gone) while its row exists
SELECT count(*) AS events_before FROM consumers.outbox \gset
SELECT body, version FROM consumers.edit_message(:'k1', 'edited', 'alice');
SELECT body, version FROM consumers.edit_message(:'k1', 'edited', 'alice');
SELECT id = :'k1' AS same_id, body FROM consumers.send_message(7, 'once', 'alice', 'key-1');
SELECT body, version FROM consumers.delete_message(:'k1', 'alice');
SELECT body, version FROM consumers.delete_message(:'k1', 'alice');
SELECT body, version FROM consumers.delete_message(:'k1');
-- (their errors name the message's random id: the SQLSTATE only)
\set VERBOSITY sqlstate
SELECT * FROM consumers.delete_message(:'k1', 'bob');
SELECT * FROM consumers.edit_message(:'k1', 'after', 'alice');
\set VERBOSITY :verbosity_before
SELECT id = :'k1' AS same_id, body = '' AS deleted FROM consumers.send_message(7, 'once', 'alice', 'key-1');
SELECT (SELECT count(*) FROM consumers.outbox) - :events_before AS events;
