-- Tariffs (docs/tariffs.md): what charging costs at a team's sites, on the OCPI 2.2.1 model,
-- and what each transaction cost.

-- A team's tariff. `body` is the tariff's rules as the API shows them (currency, elements,
-- min_price, max_price), JSON; `currency` is kept beside it to list and check without parsing.
CREATE TABLE tariffs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid       TEXT NOT NULL UNIQUE,
    team_id    INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    currency   TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX tariffs_of_team ON tariffs (team_id, id);

-- A site's tariff prices its chargers' transactions; a tariff in use cannot be deleted.
-- Time-of-day restrictions follow the site's time zone (an IANA name).
ALTER TABLE sites ADD COLUMN tariff_id INTEGER REFERENCES tariffs(id);
ALTER TABLE sites ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';

-- The tariff in force when the transaction started, kept whole (later edits do not change what
-- the session costs): `tariff` is the body, `time_zone` the site's then. `cost` is the final
-- cost, JSON, written once the transaction stopped.
ALTER TABLE transactions ADD COLUMN tariff_id INTEGER REFERENCES tariffs(id) ON DELETE SET NULL;
ALTER TABLE transactions ADD COLUMN tariff_uuid TEXT;
ALTER TABLE transactions ADD COLUMN tariff TEXT;
ALTER TABLE transactions ADD COLUMN time_zone TEXT;
ALTER TABLE transactions ADD COLUMN cost TEXT;

-- What a priced transaction's cost is computed from: the energy register over time (at most one
-- reading a minute, plus every status change: parking starts and ends). `energy_wh` is NULL for
-- a status change, `parking` NULL for a reading.
CREATE TABLE transaction_readings (
    transaction_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    at             TEXT NOT NULL,
    energy_wh      INTEGER,
    parking        INTEGER,
    PRIMARY KEY (transaction_id, at)
);
