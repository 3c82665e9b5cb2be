-- Schema version 3: keys that live with the data (store/keys.go, issue
-- #36). Every public key that signs receipts stored here, by key version,
-- and the transparency log's identity (its origin and checkpoint key),
-- recorded by the first process to serve it, so that every replica, and a
-- store copied here, publishes them whatever key folder it runs with.

CREATE TABLE signing_keys (
    key_version text        PRIMARY KEY CHECK (length(key_version) BETWEEN 1 AND 128),
    public_key  bytea       NOT NULL CHECK (length(public_key) = 32),
    recorded_at timestamptz NOT NULL DEFAULT now()
);

-- One row: the log's origin and the Ed25519 public key of its checkpoints.
CREATE TABLE log_identity (
    id          smallint    PRIMARY KEY CHECK (id = 1),
    origin      text        NOT NULL CHECK (length(origin) BETWEEN 1 AND 1024),
    public_key  bytea       NOT NULL CHECK (length(public_key) = 32),
    recorded_at timestamptz NOT NULL DEFAULT now()
);
