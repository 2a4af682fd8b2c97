-- Sites > Smart Charging (docs/smart-charging.md). The mode stays in sites.smart_charging
-- (`disabled`, `static`, `dynamic`); the rest of a site's settings are here, with what its
-- balancer last saw and decided (the status endpoint reads it).
CREATE TABLE site_smart_charging (
    site_id               BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    -- The grid connection's limit, per phase.
    grid_limit_amps       DOUBLE PRECISION,
    -- The CT meter that measures the grid connection (`dynamic`).
    meter_id              BIGINT REFERENCES meters(id) ON DELETE SET NULL,
    -- `equal` or `priority`.
    strategy              TEXT NOT NULL DEFAULT 'equal',
    min_amps              DOUBLE PRECISION NOT NULL DEFAULT 6,
    safety_margin_amps    DOUBLE PRECISION NOT NULL DEFAULT 0,
    -- Per charger, while the meter is quiet.
    fail_safe_amps        DOUBLE PRECISION NOT NULL DEFAULT 6,
    -- How long the meter may be quiet before the fail-safe applies.
    meter_timeout_seconds BIGINT NOT NULL DEFAULT 60,
    updated_at            TEXT NOT NULL,
    -- The balancer acting for the site (one API process) and until when unless it renews.
    balancer              TEXT,
    lease_until           TEXT,
    -- Its last computation: the grid reading (highest phase, and each phase as JSON), what
    -- the site draws besides the chargers, what is left for them, what they were given, and
    -- the headroom under the limit (negative: over it).
    computed_at           TEXT,
    meter_amps            DOUBLE PRECISION,
    meter_phases          TEXT,
    meter_measured_at     TEXT,
    base_load_amps        DOUBLE PRECISION,
    available_amps        DOUBLE PRECISION,
    allocated_amps        DOUBLE PRECISION,
    headroom_amps         DOUBLE PRECISION,
    -- Since when the meter has been quiet and the chargers are held at the fail-safe.
    fail_safe_since       TEXT
);

-- Each charger's priority under the `priority` strategy (higher first; default 0).
CREATE TABLE smart_charging_priorities (
    charger_id BIGINT PRIMARY KEY REFERENCES chargers(id) ON DELETE CASCADE,
    priority   BIGINT NOT NULL
);

-- The limit the balancer last sent to each connector; connector 0 is the charger's
-- TxDefaultProfile (the fail-safe level every new transaction starts at).
CREATE TABLE smart_charging_limits (
    charger_id     BIGINT NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    connector_id   BIGINT NOT NULL,
    limit_amps     DOUBLE PRECISION NOT NULL,
    -- The last limit the charger accepted for this transaction (what it is held to while a
    -- newer one is unanswered); null before any.
    applied_amps   DOUBLE PRECISION,
    -- `TxProfile` or `TxDefaultProfile`.
    purpose        TEXT NOT NULL,
    transaction_id BIGINT,
    -- The charger's session it went to: a new session is sent its limits again.
    session        TEXT NOT NULL,
    action_uuid    TEXT NOT NULL,
    -- `pending`, then `accepted`, `rejected` or `failed` (no answer, a CALLERROR).
    status         TEXT NOT NULL,
    sent_at        TEXT NOT NULL,
    answered_at    TEXT,
    -- The connector's own Current.Import when last computed, and since when it is paused.
    measured_amps  DOUBLE PRECISION,
    paused_since   TEXT,
    PRIMARY KEY (charger_id, connector_id)
);

-- The balancer reads the open transactions of its sites every round.
CREATE INDEX transactions_open ON transactions (charger_id, connector_id, started_at)
    WHERE stopped_at IS NULL;
