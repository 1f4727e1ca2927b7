-- Chat membership (docs/extension.md, Membership): who may read and write a chat when a gateway runs
-- with --authz membership. One table for the database, not per service: both services' gateways
-- decide for the same chats. Idempotent (IF NOT EXISTS, CREATE OR REPLACE), because the update to
-- 1.1 (sql/managed/generate.py, update()) runs this same text.
CREATE TABLE IF NOT EXISTS chat_outbox.members (
	chat_id bigint NOT NULL,
	-- the token's sub, by the rule of chat_outbox.check_user_id (which add_member applies first, with
	-- its own message); the CHECK holds rows written in bulk to it too
	user_id text NOT NULL CHECK (user_id OPERATOR(pg_catalog.<>) '' AND pg_catalog.octet_length(user_id) OPERATOR(pg_catalog.<=) 200
		AND user_id OPERATOR(pg_catalog.!~) '[\x01-\x1f\x7f]'),
	added_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	PRIMARY KEY (chat_id, user_id)
);
COMMENT ON TABLE chat_outbox.members IS
	'Who is a member of which chat (gateways with --authz membership); change it with add_member/remove_member or in bulk with INSERT/DELETE.';
-- a gateway reads the first chats of a user by id (--max-member-chats of them, however many the user
-- has): in this index they are the first entries under the user, read without sorting the rest
CREATE INDEX IF NOT EXISTS members_user ON chat_outbox.members (user_id, chat_id);

-- Every committed change reaches the gateways as a NOTIFY on channel chat_outbox_members, sent at
-- commit and in commit order (so a removal is never announced before it is visible). The payload is
-- "+<chat_id> <user_id>" (added) or "-<chat_id> <user_id>" (removed) for a statement that changed at most kMembersNotifyRows (64) rows, and "*"
-- for a bigger one: a bulk load would otherwise queue one notification per row, and a gateway that
-- gets "*" reloads every connected user's chats at once (daemon/src/gateway/auth/membership.cpp).
CREATE OR REPLACE FUNCTION chat_outbox.members_changed() RETURNS trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
AS $changed$
DECLARE
	n bigint;
	r record;
BEGIN
	IF TG_OP = 'INSERT' THEN
		SELECT count(*) INTO n FROM added;
	ELSIF TG_OP = 'DELETE' THEN
		SELECT count(*) INTO n FROM removed;
	ELSE
		SELECT (SELECT count(*) FROM added) + (SELECT count(*) FROM removed) INTO n;
	END IF;
	IF n = 0 THEN
		RETURN NULL;
	END IF;
	IF n > 64 THEN
		PERFORM pg_notify('chat_outbox_members', '*');
		RETURN NULL;
	END IF;
	-- an UPDATE is the old row's removal, then the new row's addition
	IF TG_OP <> 'INSERT' THEN
		FOR r IN SELECT d.chat_id, d.user_id FROM removed d LOOP
			PERFORM pg_notify('chat_outbox_members', '-' || r.chat_id || ' ' || r.user_id);
		END LOOP;
	END IF;
	IF TG_OP <> 'DELETE' THEN
		FOR r IN SELECT a.chat_id, a.user_id FROM added a LOOP
			PERFORM pg_notify('chat_outbox_members', '+' || r.chat_id || ' ' || r.user_id);
		END LOOP;
	END IF;
	RETURN NULL;
END
$changed$;
REVOKE ALL ON FUNCTION chat_outbox.members_changed() FROM PUBLIC;

DROP TRIGGER IF EXISTS members_added ON chat_outbox.members;
DROP TRIGGER IF EXISTS members_removed ON chat_outbox.members;
DROP TRIGGER IF EXISTS members_updated ON chat_outbox.members;
CREATE TRIGGER members_added AFTER INSERT ON chat_outbox.members
	REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.members_changed();
CREATE TRIGGER members_removed AFTER DELETE ON chat_outbox.members
	REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.members_changed();
CREATE TRIGGER members_updated AFTER UPDATE ON chat_outbox.members
	REFERENCING NEW TABLE AS added OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chat_outbox.members_changed();

-- check_member: the gateway's send with --authz membership calls it in the send's statement. It
-- locks the membership row FOR KEY SHARE until the send commits, so a remove_member racing the send
-- waits for it (the message is committed before the removal) or, committed first, makes it fail
-- here (42501, nothing written). True when user_id is a member of chat_id.
CREATE OR REPLACE FUNCTION chat_outbox.check_member(chat_id bigint, user_id text) RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $check$
BEGIN
	PERFORM FROM chat_outbox.members m WHERE m.chat_id = check_member.chat_id AND m.user_id = check_member.user_id
		FOR KEY SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'forbidden: not a member of chat %', chat_id
			USING ERRCODE = '42501', HINT = 'chat_outbox.add_member() makes a user a member.';
	END IF;
	RETURN true;
END
$check$;
REVOKE ALL ON FUNCTION chat_outbox.check_member(bigint, text) FROM PUBLIC;

-- add_member: true when the user was not a member yet. A NULL chat_id or user_id is 22004; the
-- user id rule is check_user_id's (22023).
CREATE OR REPLACE FUNCTION chat_outbox.add_member(chat_id bigint, user_id text) RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $add$
DECLARE
	n int;
BEGIN
	IF chat_id IS NULL OR user_id IS NULL THEN
		RAISE EXCEPTION '% must not be null', CASE WHEN chat_id IS NULL THEN 'chat_id' ELSE 'user_id' END
			USING ERRCODE = '22004', HINT = 'Pass a chat id and a user id (the token''s sub).';
	END IF;
	PERFORM chat_outbox.check_user_id('user_id', user_id);
	INSERT INTO chat_outbox.members AS m (chat_id, user_id) VALUES (add_member.chat_id, add_member.user_id)
		ON CONFLICT DO NOTHING;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n > 0;
END
$add$;
COMMENT ON FUNCTION chat_outbox.add_member(bigint, text) IS
	'Makes user_id (a token''s sub) a member of chat_id; true when it was not one. Gateways with --authz membership let it join at once.';

-- remove_member: true when the user was a member. At its commit every gateway with --authz
-- membership takes the user's sockets out of the chat (docs/gateway.md, Membership).
CREATE OR REPLACE FUNCTION chat_outbox.remove_member(chat_id bigint, user_id text) RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER
	SET search_path = pg_catalog, pg_temp
AS $remove$
DECLARE
	n int;
BEGIN
	IF chat_id IS NULL OR user_id IS NULL THEN
		RAISE EXCEPTION '% must not be null', CASE WHEN chat_id IS NULL THEN 'chat_id' ELSE 'user_id' END
			USING ERRCODE = '22004', HINT = 'Pass a chat id and a user id (the token''s sub).';
	END IF;
	PERFORM chat_outbox.check_user_id('user_id', user_id);
	DELETE FROM chat_outbox.members m WHERE m.chat_id = remove_member.chat_id AND m.user_id = remove_member.user_id;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n > 0;
END
$remove$;
COMMENT ON FUNCTION chat_outbox.remove_member(bigint, text) IS
	'Ends user_id''s membership of chat_id; true when it was one. Every gateway with --authz membership removes the user''s sockets from the chat within a second of the commit.';
REVOKE ALL ON FUNCTION chat_outbox.add_member(bigint, text), chat_outbox.remove_member(bigint, text) FROM PUBLIC;
