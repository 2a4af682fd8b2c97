-- Chargers > Actions: every call cms makes to a charger, and how it ended (the audit log).
-- Rows move forward only (pending -> sent -> a final state); the first final state stored wins.
-- `published_at` is the outbox claim: NULL for an action the command line took, until an API
-- process publishes it to the gateways.
CREATE TABLE charger_actions (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid              TEXT NOT NULL UNIQUE,
    charger_id        INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    session           TEXT NOT NULL,
    action            TEXT NOT NULL,
    request           TEXT NOT NULL,
    status            TEXT NOT NULL,
    response          TEXT,
    error_code        TEXT,
    error_description TEXT,
    requested_by_type TEXT NOT NULL,
    requested_by_email TEXT,
    timeout_ms        INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL,
    sent_at           TEXT,
    finished_at       TEXT,
    published_at      TEXT,
    updated_at        TEXT NOT NULL
);

-- The audit log of a charger, newest first.
CREATE INDEX charger_actions_by_charger ON charger_actions (charger_id, created_at);
-- The actions still open, for the sweep that ends those no gateway reported on.
CREATE INDEX charger_actions_open ON charger_actions (status, expires_at);

-- Chargers > Settings: a charger's configuration as it last reported it (GetConfiguration),
-- and as accepted changes (ChangeConfiguration) left it.
CREATE TABLE charger_settings (
    charger_id INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT,
    readonly   INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (charger_id, key)
);
