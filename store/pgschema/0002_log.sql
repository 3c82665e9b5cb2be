-- Schema version 2: the transparency log (store/pg_log.go, issue #23), the
-- same RFC 6962 log as the bbolt store's (store/tlog.go). Verdicts stored
-- before this version are logged by the migration itself, in verified_at
-- order (pgMigrationHooks), in this step's transaction.

-- The log's head: its size and root hash. Its one row is the sequencer:
-- every append locks it (SELECT … FOR UPDATE) in the transaction that
-- stores the verdicts it appends, so replicas append one at a time.
CREATE TABLE log_head (
    id   smallint PRIMARY KEY CHECK (id = 1),
    size bigint NOT NULL CHECK (size >= 0),
    root bytea  NOT NULL CHECK (length(root) = 32)
);

-- tlog's stored hashes, keyed by their storage index
-- (tlog.StoredHashIndex).
CREATE TABLE log_hashes (
    idx  bigint PRIMARY KEY,
    hash bytea  NOT NULL CHECK (length(hash) = 32)
);

-- One row per record: its index, its verdict and its entry (store.LogEntry
-- of the verdict's receipt).
CREATE TABLE log_entries (
    idx             bigint PRIMARY KEY,
    verification_id bytea  NOT NULL UNIQUE REFERENCES verdicts (verification_id),
    entry           bytea  NOT NULL CHECK (length(entry) = 32)
);

-- No verdict without its entry, checked at commit: a verifier of schema
-- version 1 still running when this one migrated (it sees the newer
-- version only at its next check) cannot store a verdict the log lacks.
CREATE FUNCTION verdict_is_logged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM log_entries WHERE verification_id = NEW.verification_id) THEN
        RAISE EXCEPTION 'a verdict without its transparency log entry (written by a verifier older than schema version 2?)'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER verdicts_logged AFTER INSERT ON verdicts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION verdict_is_logged();
