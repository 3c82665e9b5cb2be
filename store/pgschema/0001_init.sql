-- Schema version 1 of the verifier's PostgreSQL store (see store/pg.go).
-- Ids are bytea: the service accepts any bytes in an id, as the bbolt
-- store does, and text refuses NUL. Times are Unix nanoseconds (bigint),
-- the precision the service keeps.

CREATE TABLE verdicts (
    verification_id bytea PRIMARY KEY,
    verified_at_ns  bigint  NOT NULL,
    agent_id        bytea   NOT NULL,  -- '' when the request named no agent
    counted         boolean NOT NULL,  -- false for no agent and test- agents
    summary         bytea,             -- the recent-verdicts line, when counted
    record          bytea   NOT NULL   -- the bbolt store's verdict record, receipt verbatim at its end
);
CREATE INDEX verdicts_by_agent ON verdicts (agent_id, verified_at_ns, verification_id) WHERE counted;

CREATE TABLE agents (
    agent_id bytea PRIMARY KEY,
    total    bigint NOT NULL DEFAULT 0,
    passed   bigint NOT NULL DEFAULT 0,
    failed   bigint NOT NULL DEFAULT 0,
    first_ns bigint NOT NULL DEFAULT 0,
    last_ns  bigint NOT NULL DEFAULT 0,
    w_pass   double precision NOT NULL DEFAULT 0, -- decayed to last_ns
    w_fail   double precision NOT NULL DEFAULT 0
);

CREATE TABLE allowance (
    day    date   NOT NULL,  -- UTC
    client bytea  NOT NULL,
    used   bigint NOT NULL CHECK (used >= 0),
    PRIMARY KEY (day, client)
);

CREATE TABLE payments (
    payment_id  bytea PRIMARY KEY,
    deadline_ns bigint   NOT NULL,  -- expiry + retention: purged after
    state       smallint NOT NULL,  -- store.PaymentState
    record      bytea    NOT NULL   -- the bbolt store's payment value after its deadline
);
CREATE INDEX payments_by_deadline ON payments (deadline_ns);

CREATE TABLE write_probe (
    id smallint PRIMARY KEY CHECK (id = 1),
    at timestamptz NOT NULL
);
