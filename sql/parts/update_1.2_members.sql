-- The update from 1.1 to 1.2 of chat_outbox.members: its user index also orders each user's chats by
-- id, so a gateway reads a user's first --max-member-chats chats without sorting all of them
-- (members.sql). 1.1 made it on (user_id) alone; an index made already by this text is left as it is.
DO $members_user$
BEGIN
	IF (SELECT pg_catalog.array_length(i.indkey::int2[], 1) FROM pg_catalog.pg_index i
			WHERE i.indexrelid OPERATOR(pg_catalog.=) 'chat_outbox.members_user'::pg_catalog.regclass) OPERATOR(pg_catalog.=) 1 THEN
		DROP INDEX chat_outbox.members_user;
		CREATE INDEX members_user ON chat_outbox.members (user_id, chat_id);
	END IF;
END
$members_user$;
