/**
 * The PostgreSQL schema of `STORAGE=postgres`, as numbered migrations. A migration, once
 * released, never changes (the runner refuses a database whose applied migration differs from
 * the one here); a change is a new migration with the next number.
 *
 * Every table is keyed by tenant first. `ss_entries.line` is the entry's JSONL line exactly as a
 * session file holds it (without the newline), and `ss_sessions.header` the header line, so an
 * export is the header line and the entry lines in `seq` order, byte for byte the disk file.
 */
export interface Migration {
  version: number
  name: string
  sql: string
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, entries, idempotency keys, blobs, terminal breadcrumbs',
    sql: `
CREATE TABLE ss_sessions (
  tenant       text        NOT NULL,
  id           text        NOT NULL,
  cwd          text        NOT NULL,
  header       text        NOT NULL,
  title        text,
  leaf_id      text,
  revision     bigint      NOT NULL DEFAULT 0,
  entry_count  bigint      NOT NULL DEFAULT 0,
  unsaved      boolean     NOT NULL DEFAULT true,
  created_at   timestamptz NOT NULL DEFAULT now(),
  modified_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
);
CREATE INDEX ss_sessions_listing ON ss_sessions (tenant, cwd, modified_at DESC) WHERE NOT unsaved;
CREATE INDEX ss_sessions_unsaved ON ss_sessions (modified_at) WHERE unsaved;

CREATE TABLE ss_entries (
  tenant       text        NOT NULL,
  session      text        NOT NULL,
  seq          bigint      NOT NULL,
  id           text        NOT NULL,
  line         text        NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant, session, seq),
  UNIQUE (tenant, session, id),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE ss_idempotency_keys (
  tenant       text        NOT NULL,
  session      text        NOT NULL,
  key          text        NOT NULL,
  body_hash    text        NOT NULL,
  response     jsonb       NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant, session, key),
  FOREIGN KEY (tenant, session) REFERENCES ss_sessions (tenant, id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX ss_idempotency_keys_expiry ON ss_idempotency_keys (expires_at);

CREATE TABLE ss_blobs (
  tenant       text        NOT NULL,
  hash         text        NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  media_type   text        NOT NULL,
  size         bigint      NOT NULL,
  data         bytea       NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, hash)
);

CREATE TABLE ss_breadcrumbs (
  tenant       text        NOT NULL,
  terminal_id  text        NOT NULL,
  session      text        NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, terminal_id)
);
`,
  },
]
