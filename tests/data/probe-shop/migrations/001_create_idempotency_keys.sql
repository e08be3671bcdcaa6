CREATE TABLE idempotency_keys (
  user_id         uuid        NOT NULL,
  key             text        NOT NULL,
  request_hash    char(64)    NOT NULL,
  state           text        NOT NULL CHECK (state IN ('in_progress', 'completed')),
  response_status integer,
  response_body   jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
