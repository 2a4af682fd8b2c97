-- Meters attached to chargers (a CT meter clamped on the charger's supply). The readings are
-- not stored here: they are the charger's own Inlet meter values in latest_meter_values.
CREATE TABLE meters (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid       TEXT NOT NULL UNIQUE,
    -- The team that attached it.
    team_id    INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    charger_id INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- One meter of each type per charger: the chargee look-up answers exactly one.
    UNIQUE (charger_id, type)
);

-- A charger's transactions, newest first (endpoint 5).
CREATE INDEX transactions_by_charger_start ON transactions (charger_id, started_at);
