-- OCPI sessions and CDRs (docs/ocpi.md "Sessions and CDRs").

-- A transaction's uuid: the id of its OCPI Session and CDR (a CiString(36) no other CPO object
-- shares). Every transaction has one from its insert on, the rows before this migration too.
ALTER TABLE transactions ADD COLUMN uuid TEXT DEFAULT gen_random_uuid()::text;
CREATE UNIQUE INDEX transactions_by_uuid ON transactions (uuid);

-- What a party was last told of a running session (its kWh and total cost, as pushed), so that
-- the running sessions' updates go only when something changed, a restart included.
CREATE TABLE ocpi_session_pushes (
    provider_id     BIGINT NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    transaction_id  BIGINT NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    -- The `kwh` pushed, and the `total_cost` (JSON, null when it had none).
    kwh             TEXT NOT NULL,
    total_cost      TEXT,
    pushed_at       TEXT NOT NULL,
    PRIMARY KEY (provider_id, transaction_id)
);

-- A party's sessions are its provider's drivers' (transactions.provider_uuid): few of all.
CREATE INDEX transactions_by_provider ON transactions (provider_uuid, id)
    WHERE provider_uuid IS NOT NULL;
