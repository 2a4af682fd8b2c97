-- OCPI sessions and CDRs (docs/ocpi.md "Sessions and CDRs").

-- A transaction's uuid: the id of its OCPI Session and CDR (a CiString(36) no other CPO object
-- shares). Every transaction has one from its insert on: the rows before this migration are
-- given theirs here, later rows by the trigger (SQLite takes no volatile column default).
ALTER TABLE transactions ADD COLUMN uuid TEXT;
UPDATE transactions SET uuid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2)))
    || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
    || '-' || lower(hex(randomblob(6)));
CREATE UNIQUE INDEX transactions_by_uuid ON transactions (uuid);
CREATE TRIGGER transactions_uuid AFTER INSERT ON transactions WHEN NEW.uuid IS NULL
BEGIN
    UPDATE transactions SET uuid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2)))
        || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
        || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
        || '-' || lower(hex(randomblob(6)))
    WHERE id = NEW.id;
END;

-- What a party was last told of a running session (its kWh and total cost, as pushed), so that
-- the running sessions' updates go only when something changed, a restart included.
CREATE TABLE ocpi_session_pushes (
    provider_id     INTEGER NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    transaction_id  INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    -- The `kwh` pushed, and the `total_cost` (JSON, null when it had none).
    kwh             TEXT NOT NULL,
    total_cost      TEXT,
    pushed_at       TEXT NOT NULL,
    PRIMARY KEY (provider_id, transaction_id)
);

-- A party's sessions are its provider's drivers' (transactions.provider_uuid): few of all.
CREATE INDEX transactions_by_provider ON transactions (provider_uuid, id)
    WHERE provider_uuid IS NOT NULL;
