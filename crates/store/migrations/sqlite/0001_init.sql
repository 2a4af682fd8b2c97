-- Record timestamps are stored as text in the API's own form, 2026-11-21T10:00:00.000000Z,
-- which sorts in time order and reads the same on every backend.

CREATE TABLE users (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE teams (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid             TEXT NOT NULL UNIQUE,
    owner_user_id    INTEGER REFERENCES users(id),
    name             TEXT NOT NULL,
    type             TEXT NOT NULL,
    email            TEXT,
    is_personal_team INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE TABLE team_user (
    team_id INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role    TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);

CREATE TABLE personal_access_tokens (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL,
    scopes      TEXT NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE sites (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid                  TEXT NOT NULL UNIQUE,
    team_id               INTEGER NOT NULL REFERENCES teams(id),
    name                  TEXT NOT NULL,
    address               TEXT,
    street                TEXT NOT NULL,
    postal_code           TEXT NOT NULL,
    house_number          INTEGER NOT NULL,
    house_number_addition TEXT,
    city                  TEXT NOT NULL,
    country               TEXT NOT NULL,
    smart_charging        TEXT NOT NULL DEFAULT 'disabled',
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE TABLE chargers (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid                  TEXT NOT NULL UNIQUE,
    site_id               INTEGER NOT NULL REFERENCES sites(id),
    identity              TEXT NOT NULL UNIQUE,
    reference             TEXT,
    password_hash         TEXT,
    connection_status     TEXT NOT NULL DEFAULT 'never_seen',
    -- The gateway session that last connected: a disconnect of an older session that was
    -- replaced by a newer one must not mark the charger offline.
    session               TEXT,
    status                TEXT,
    error                 TEXT,
    error_info            TEXT,
    vendor_id             TEXT,
    vendor_error_code     TEXT,
    vendor                TEXT,
    model                 TEXT,
    serial_number         TEXT,
    firmware_version      TEXT,
    server                TEXT,
    last_connection_at    TEXT,
    last_disconnection_at TEXT,
    last_heartbeat_at     TEXT,
    setup_pending         INTEGER NOT NULL DEFAULT 0,
    setup_completed       INTEGER NOT NULL DEFAULT 1,
    blocked               INTEGER NOT NULL DEFAULT 0,
    max_current           REAL,
    license_smart         INTEGER NOT NULL DEFAULT 0,
    license_pro           INTEGER NOT NULL DEFAULT 0,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE TABLE connectors (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id        INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    connector_id      INTEGER NOT NULL,
    status            TEXT NOT NULL DEFAULT 'Unavailable',
    error             TEXT NOT NULL DEFAULT 'NoError',
    error_info        TEXT,
    vendor_id         TEXT,
    vendor_error_code TEXT,
    max_amperage      INTEGER,
    max_voltage       INTEGER,
    standard          TEXT,
    format            TEXT,
    power_type        TEXT,
    phase_rotation    TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    UNIQUE (charger_id, connector_id)
);

CREATE TABLE transactions (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id           INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    charger_connector_id INTEGER REFERENCES connectors(id),
    connector_id         INTEGER NOT NULL,
    -- The transactionId the gateway gave the charger; unique per charger.
    ocpp_transaction_id  INTEGER NOT NULL,
    reservation_id       INTEGER,
    id_tag               TEXT NOT NULL,
    meter_start          INTEGER NOT NULL,
    meter_stop           INTEGER,
    started_at           TEXT NOT NULL,
    stopped_at           TEXT,
    stop_reason          TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    UNIQUE (charger_id, ocpp_transaction_id)
);
CREATE INDEX transactions_by_start ON transactions (charger_id, connector_id, id_tag, meter_start, started_at);

CREATE TABLE latest_meter_values (
    charger_id   INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    connector_id INTEGER NOT NULL,
    -- The REST form of the reading: the `meterValue` array, already normalised.
    meter_value  TEXT NOT NULL,
    -- The newest sample time of the reading: an older reading sent late does not replace it.
    measured_at  TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (charger_id, connector_id)
);
