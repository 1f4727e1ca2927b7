#!/usr/bin/env python3
# sql/managed/generate.py - builds both modes' SQL, by concatenation only: the current version from the
# parts in sql/parts/, the released updates from the bodies in sql/released/:
#   sql/chat_outbox--1.6.sql              the extension's script (CREATE EXTENSION chat_outbox)
#   sql/managed/chat_outbox_managed.sql   the managed install, for a Postgres that cannot load our library
#   sql/chat_outbox--1.5--1.6.sql         the extension's update from 1.5 (ALTER EXTENSION chat_outbox UPDATE)
#   sql/managed/update_1.6.sql            the same update of a managed install, run by the operator
#   sql/chat_outbox--1.0--1.1.sql to --1.4--1.5.sql, sql/managed/update_1.1.sql to update_1.5.sql
#                                         the released updates, each mode's from one body
#                                         (sql/released/update_<version>.sql), byte for byte as released
# The base of each mode is committed as released (sql/released/chat_outbox--1.0.sql, installed with the
# extension, and sql/released/chat_outbox_managed-1.0.sql, for the update tests): an older version is
# its base and the updates after it (CREATE EXTENSION chat_outbox VERSION '1.3': Postgres chains them
# itself when the version has no script of its own).
# Both modes' current scripts are the shared parts (sql/parts/*.sql: every table, send_message(),
# publish_event(), create_service(), grant_service(), the backlog functions and the status views, one
# text for both) around each mode's own parts (sql/parts/extension/, sql/parts/managed/). What the modes
# do differently is a function each mode defines under the same name and signature (the wake-up
# triggers, the body limit, the relay's status), so the shared text calls it without knowing the mode.
# It also writes the in-place switches between the modes from the same parts: from_extension.sql
# (the extension's objects become the managed install's) and the extension's version 'managed' with
# its update to the current version (a managed install's objects become the extension's).
# What it writes is built, never committed (.gitignore): `make` (the extension's Makefile) and the
# CMake build run it (repo.hygiene fails when one is tracked). A release freezes its update:
# `--release` writes sql/released/update_<VERSION>.sql (the body, both heads, the extension's tail and
# the sha256 of both scripts), then VERSION and PREVIOUS move on and the update's parts
# (sql/parts/update_<VERSION>*.sql) go.
#   sql/managed/generate.py            write the files
#   sql/managed/generate.py --list     print their paths, relative to the repository's root
#   sql/managed/generate.py --check    exit 1 when a file in the tree is not what would be written
#   sql/managed/generate.py --release  freeze the current version's update in sql/released/
# docs/managed.md describes the result.
import hashlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PARTS = ROOT / "sql" / "parts"
RELEASED = ROOT / "sql" / "released"
VERSION = "1.6"
PREVIOUS = "1.5"
BASE = "1.0"  # the version of both modes' base (sql/released/): the released updates start from it
EXTENSION = ROOT / "sql" / f"chat_outbox--{VERSION}.sql"
MANAGED = ROOT / "sql" / "managed" / "chat_outbox_managed.sql"
# The update from the previous version, the same text in both modes (sql/parts/update_<VERSION>*.sql after
# the shared functions):
EXTENSION_UPDATE = ROOT / "sql" / f"chat_outbox--{PREVIOUS}--{VERSION}.sql"
MANAGED_UPDATE = ROOT / "sql" / "managed" / f"update_{VERSION}.sql"
# In-place switches between the modes in one database (docs/managed.md, Switching modes):
FROM_EXTENSION = ROOT / "sql" / "managed" / "from_extension.sql"        # extension -> managed install
ADOPT_INSTALL = ROOT / "sql" / "chat_outbox--managed.sql"             # CREATE EXTENSION ... VERSION 'managed'
ADOPT_UPDATE = ROOT / "sql" / f"chat_outbox--managed--{VERSION}.sql"   # ... then UPDATE TO VERSION

# Each mode's functions that the other mode defines too (CREATE OR REPLACE): a switch runs the
# target mode's file over the source mode's functions.
SWAPPED = ["hooks.sql", "relay_status.sql"]
SHARED_BEFORE_STATUS = ["services_table.sql", "origin.sql", "outbox_tables.sql", "services.sql", "members.sql", "outbox.sql"]
SHARED_AFTER_STATUS = ["status.sql", "seed.sql"]
# The extension's tables whose rows pg_dump keeps: the install's, then those each update made (the
# update's own file, also at the end of its update script).
CONFIG_DUMP = ["extension/config_dump.sql", "extension/config_dump_1.2.sql", "extension/config_dump_1.3.sql",
               "extension/config_dump_1.6.sql"]
# The update's own file of those (the extension's update only: pg_dump's list is the extension's).
CONFIG_DUMP_UPDATE = "extension/config_dump_1.6.sql"
# What the update from the previous version gives anew (CREATE OR REPLACE) before its own steps.
UPDATE_SHARED = ["origin.sql", "services.sql", "outbox.sql", "status.sql"]
# What the update does, in the header of both modes' update files (comment lines, without "-- ").
UPDATE_WHAT = ["no committed message lost under any schedule: the generation a writer writes to read from a",
               "sequence whatever its snapshot, a generation closed with an xid drawn after its switch, windows",
               "without an upper id bound, a pass's checks (its transaction, the id sequence's cache), and an",
               "outbox restored in another database rebased, not lost (docs/architecture.md, 'The write-once outbox')"]


def update_what():
    return "\n".join(f"-- {line}" for line in UPDATE_WHAT)


def part(name):
    # @VERSION@ in a part is the version being built (a script's head names its own file)
    return (PARTS / name).read_text().replace("@VERSION@", VERSION)


def parts(*names):
    return "\n".join(part(n) for n in names)


def extension():
    return parts("extension/head.sql", "extension/hooks.sql", *SHARED_BEFORE_STATUS, "extension/relay_pass.sql",
                 "extension/relay_status.sql", *SHARED_AFTER_STATUS, *CONFIG_DUMP)


def managed():
    return parts("managed/head.sql", "managed/tables.sql", "managed/hooks.sql", *SHARED_BEFORE_STATUS,
                 "managed/relay_status.sql", *SHARED_AFTER_STATUS) + "\nCOMMIT;\n"


def swapped(mode):
    return parts(*(f"{mode}/{n}" for n in SWAPPED))


def from_extension():
    tables = part("managed/tables.sql")
    swapped_sql = swapped("managed")
    return f"""-- sql/managed/from_extension.sql - switch one database in place from the extension to the managed
-- install. GENERATED by sql/managed/generate.py: do not edit. Run it as the extension's owner (a
-- superuser) while senders go on sending: every object and row stays, the extension is dropped
-- around them, and what needs the library is replaced by the managed install's SQL. Then start
-- chat-outbox-relay and turn the in-database relay off (docs/managed.md, Switching modes).
\\set ON_ERROR_STOP on
BEGIN;
-- keep every object: take each out of the extension, then drop the extension, now empty
DO $detach$
DECLARE
	o record;
BEGIN
	FOR o IN SELECT (pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid)).*
		FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
		WHERE e.extname = 'chat_outbox' AND d.deptype = 'e'
	LOOP
		EXECUTE format('ALTER EXTENSION chat_outbox DROP %s %s', o.type, o.identity);
	END LOOP;
END
$detach$;
DROP EXTENSION chat_outbox;

{tables}
-- the settings the extension read from chat_outbox.* (retentions in seconds)
UPDATE chat_outbox.settings SET
	max_body_bytes = coalesce(pg_catalog.current_setting('chat_outbox.max_body_bytes', true)::int, 65536),
	retention = coalesce((SELECT setting::int FROM pg_catalog.pg_settings WHERE name = 'chat_outbox.retention'), 86400) * interval '1 s',
	inbox_retention = coalesce((SELECT setting::int FROM pg_catalog.pg_settings WHERE name = 'chat_outbox.inbox_retention'), 0) * interval '1 s';

DROP FUNCTION chat_outbox.relay_pass(text);

{swapped_sql}
COMMIT;
"""


def adopt_install():
    return f"""-- sql/chat_outbox--managed.sql - CREATE EXTENSION chat_outbox VERSION 'managed': the start of switching
-- one database in place from the managed install to the extension. GENERATED by
-- sql/managed/generate.py: do not edit. It creates nothing; ALTER EXTENSION chat_outbox UPDATE TO
-- '{VERSION}' (chat_outbox--managed--{VERSION}.sql) then takes the managed install's objects over.
\\echo Use "CREATE EXTENSION chat_outbox VERSION 'managed'" to load this file. \\quit
DO $check$
BEGIN
	IF pg_catalog.to_regclass('chat_outbox.settings') IS NULL THEN
		RAISE EXCEPTION 'chat_outbox: this database has no managed install to take over'
			USING HINT = 'CREATE EXTENSION chat_outbox (without VERSION) makes a new install.';
	END IF;
END
$check$;
"""


# The managed install's own tables (managed/tables.sql), left for the operator to drop after a switch
# to the extension.
MANAGED_ONLY = "ARRAY['settings', 'relays', 'relay_progress']"


def adopt_update():
    relay_pass = part("extension/relay_pass.sql")
    swapped_sql = swapped("extension")
    config_dump = parts(*CONFIG_DUMP)
    return f"""-- sql/chat_outbox--managed--{VERSION}.sql - ALTER EXTENSION chat_outbox UPDATE TO '{VERSION}' from version 'managed':
-- the managed install's objects become the extension's, as CREATE EXTENSION chat_outbox would have
-- made them, every row kept; the managed install's own tables stay until dropped by hand once the
-- external relays are stopped (docs/managed.md, Switching modes). GENERATED by
-- sql/managed/generate.py: do not edit.
\\echo Use "ALTER EXTENSION chat_outbox UPDATE TO '{VERSION}'" to load this file. \\quit

-- the objects CREATE EXTENSION makes: everything in schema chat_outbox (the schema itself holds the
-- extension), and the seed services consumers and workers (services created later stay ordinary
-- objects, as with the extension). Not the managed install's own tables: a send that started
-- before this commits may still read chat_outbox.settings, and a running chat-outbox-relay writes
-- the other two, so they are dropped by hand once the external relays are stopped.
DO $adopt$
DECLARE
	o record;
BEGIN
	FOR o IN
		SELECT 'schema' AS type, pg_catalog.quote_ident(n.nspname) AS identity
			FROM pg_catalog.pg_namespace n WHERE n.nspname IN ('consumers', 'workers')
		UNION ALL
		SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'S' THEN 'sequence' ELSE 'view' END,
			pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname)
			FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname IN ('chat_outbox', 'consumers', 'workers') AND c.relkind IN ('r', 'p', 'S', 'v')
				AND NOT (n.nspname = 'chat_outbox' AND c.relname = ANY ({MANAGED_ONLY}))
		UNION ALL
		SELECT 'function', p.oid::regprocedure::text
			FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname IN ('chat_outbox', 'consumers', 'workers')
	LOOP
		EXECUTE format('ALTER EXTENSION chat_outbox ADD %s %s', o.type, o.identity);
	END LOOP;
END
$adopt$;

{relay_pass}
{swapped_sql}
{config_dump}"""


# The update's text: the shared functions anew (CREATE OR REPLACE), then each service's own update:
# every sql/parts/update_<VERSION>*.sql in name order, so that a change of its own adds a file beside the
# others'.
def update():
    steps = sorted(p.name for p in PARTS.glob(f"update_{VERSION}*.sql"))
    return parts(*UPDATE_SHARED, *steps)


def extension_update():
    head = f"""-- sql/chat_outbox--{PREVIOUS}--{VERSION}.sql - ALTER EXTENSION chat_outbox UPDATE from {PREVIOUS}:
{update_what()}
-- (docs/extension.md, 'Updating from {PREVIOUS}').
-- GENERATED by sql/managed/generate.py from sql/parts/: do not edit.
"""
    return head, update(), "\n" + part(CONFIG_DUMP_UPDATE)


def managed_update():
    return f"""-- sql/managed/update_{VERSION}.sql - update a managed install of chat_outbox {PREVIOUS} to {VERSION} in place:
{update_what()}.
-- GENERATED by sql/managed/generate.py from sql/parts/: do not edit.
"""


# Each mode's update script around one body: the extension's runs inside ALTER EXTENSION's transaction
# and ends with its own tail (pg_dump's list of the update's tables: the extension's only); the managed
# install's runs from psql, in a transaction of its own.
def wrap_extension(head, body, tail):
    return f"""{head}\\echo Use "ALTER EXTENSION chat_outbox UPDATE" to load this file. \\quit

{body}{tail}"""


def wrap_managed(version, head, body):
    return f"""{head}-- Run it once, as the database owner who ran the install, while senders and chat-outbox-relay go on:
--   psql -v ON_ERROR_STOP=1 -f update_{version}.sql postgresql://owner@host/chat
-- (docs/managed.md, Updating).
\\set ON_ERROR_STOP on
BEGIN;
SET LOCAL search_path = pg_catalog, pg_temp;
{body}
COMMIT;
"""


# A released update, sql/released/update_<version>.sql: its own head (what it is, and the sha256 of
# both scripts as released: "-- sha256 <mode> <digest>"), then sections, each opened by a line
# "--- <section>": the extension's head and the managed install's (each script's lines before the
# wrapper's), the body both run, and the extension's tail when it has one.
SECTIONS = ["extension head", "managed head", "body", "extension tail"]


def released_update(path):
    sums, sections, name = {}, dict.fromkeys(SECTIONS, ""), None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("--- ") and line[4:].rstrip("\n") in SECTIONS:
            name = line[4:].rstrip("\n")
        elif name:
            sections[name] += line
        elif line.startswith("-- sha256 "):
            mode, digest = line.split()[2:4]
            sums[mode] = digest
    return sums, sections


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def version_key(version):
    return tuple(int(n) for n in version.split("."))


# The released updates' scripts, checked against the sha256 each was released with (unless only listed):
# {path: text}.
def released_updates(verify):
    files = sorted(RELEASED.glob("update_*.sql"), key=lambda p: version_key(p.stem[len("update_"):]))
    versions = [BASE] + [p.stem[len("update_"):] for p in files]
    scripts = {}
    for previous, version, path in zip(versions, versions[1:], files):
        sums, s = released_update(path)
        for mode, target, text in [
                ("extension", ROOT / "sql" / f"chat_outbox--{previous}--{version}.sql",
                 wrap_extension(s["extension head"], s["body"], s["extension tail"])),
                ("managed", ROOT / "sql" / "managed" / f"update_{version}.sql",
                 wrap_managed(version, s["managed head"], s["body"]))]:
            if verify and sha256(text) != sums.get(mode):
                sys.exit(f"{path.relative_to(ROOT)}: its {mode} script is not the one released (sha256 {sums.get(mode)})")
            scripts[target] = text
    return scripts


# --release: the current update as a released one (released_update() reads it back).
def release():
    ext_head, body, tail = extension_update()
    man_head = managed_update()
    ext, man = wrap_extension(ext_head, body, tail), wrap_managed(VERSION, man_head, body)
    path = RELEASED / f"update_{VERSION}.sql"
    path.write_text(f"""-- sql/released/update_{VERSION}.sql - chat_outbox's update from {PREVIOUS} to {VERSION} as released, frozen (installs ran it):
-- one body for both modes, which sql/managed/generate.py wraps into sql/chat_outbox--{PREVIOUS}--{VERSION}.sql and
-- sql/managed/update_{VERSION}.sql and checks against their sha256 as released (sections: released_update()).
-- sha256 extension {sha256(ext)}
-- sha256 managed {sha256(man)}
--- extension head
{ext_head}--- managed head
{man_head}--- body
{body}""" + (f"--- extension tail\n{tail}" if tail else ""))
    assert released_update(path)[1] == dict(zip(SECTIONS, [ext_head, man_head, body, tail]))


def outputs(verify=True):
    return {
        EXTENSION: extension(),
        MANAGED: managed(),
        EXTENSION_UPDATE: wrap_extension(*extension_update()),
        MANAGED_UPDATE: wrap_managed(VERSION, managed_update(), update()),
        FROM_EXTENSION: from_extension(),
        ADOPT_INSTALL: adopt_install(),
        ADOPT_UPDATE: adopt_update(),
        **released_updates(verify),
    }


def main():
    if sys.argv[1:] == ["--release"]:
        release()
        return
    files = outputs(verify=sys.argv[1:] != ["--list"])
    if sys.argv[1:] == ["--list"]:
        print("\n".join(str(p.relative_to(ROOT)) for p in files))
        return
    if sys.argv[1:] == ["--check"]:
        stale = [str(p.relative_to(ROOT)) for p, text in files.items() if not p.exists() or p.read_text() != text]
        if stale:
            sys.exit(f"{', '.join(stale)} out of date: run sql/managed/generate.py")
        return
    for p, text in files.items():
        p.write_text(text)


main()
