-- The write-up's tables (database "baseline"), both directions, as the write-up describes them.
-- messages: the write-up shows only its INSERT (chat_id, body) RETURNING id, chat_id, body and an
-- inbox keyed by a uuid message id, so: id uuid with a server default.
CREATE SCHEMA IF NOT EXISTS consumers;
CREATE SCHEMA IF NOT EXISTS workers;

CREATE TABLE IF NOT EXISTS consumers.messages (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  chat_id    bigint      NOT NULL,
  body       text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS workers.messages (LIKE consumers.messages INCLUDING ALL);

-- Version 2: outbox per service.
CREATE TABLE IF NOT EXISTS consumers.outbox (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event      text        NOT NULL,
  payload    jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at    timestamptz
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON consumers.outbox (id) WHERE sent_at IS NULL;

CREATE TABLE IF NOT EXISTS workers.outbox (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event      text        NOT NULL,
  payload    jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at    timestamptz
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON workers.outbox (id) WHERE sent_at IS NULL;

-- Inbox on the receiving side (dedup by message id).
CREATE TABLE IF NOT EXISTS workers.inbox (
  message_id  uuid        PRIMARY KEY,
  chat_id     bigint      NOT NULL,
  body        text        NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS consumers.inbox (
  message_id  uuid        PRIMARY KEY,
  chat_id     bigint      NOT NULL,
  body        text        NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
