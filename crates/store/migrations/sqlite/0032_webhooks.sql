-- Webhooks (docs/events.md): a team's subscriptions to cms's events, the events themselves (a
-- durable outbox, written in the same transaction as the change that caused them), and each
-- event's delivery to each subscription that should have it, with every attempt.

-- A team's subscription: where its events go, which, and the secret they are signed with. The
-- secret is kept readable because every delivery is signed with it (shown once to the team);
-- after a rotation the previous one signs too until `previous_secret_until`.
CREATE TABLE webhooks (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid                   TEXT NOT NULL UNIQUE,
    team_id                INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    url                    TEXT NOT NULL,
    description            TEXT,
    -- A JSON array of event types, e.g. ["charger.connected","transaction.ended"].
    event_types            TEXT NOT NULL,
    enabled                INTEGER NOT NULL DEFAULT 1,
    secret                 TEXT NOT NULL,
    previous_secret        TEXT,
    previous_secret_until  TEXT,
    -- Since when its deliveries fail for good (the last retry of one gave up); cleared by a
    -- delivery that succeeds.
    failing_since          TEXT,
    -- Why cms disabled it itself (`gone`: the receiver answered 410), `NULL` when it did not.
    disabled_reason        TEXT,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);
CREATE INDEX webhooks_of_team ON webhooks (team_id, id);

-- The outbox: every event, in the order it was committed (`seq`, read by cursor). `team_id`/`site_id` are the
-- owner team and the site of the resource when the event happened (a removed charger's
-- teams are still known); `subject` orders deliveries (a charger's identity, or a site's uuid).
CREATE TABLE webhook_events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id     TEXT NOT NULL UNIQUE,
    type         TEXT NOT NULL,
    subject      TEXT NOT NULL,
    team_id      INTEGER,
    site_id      INTEGER,
    -- The charger the event is about (no foreign key: a removed charger's events stay).
    charger_id   INTEGER,
    -- Whether the event carries data only teams with sensitive-data access may see.
    sensitive    INTEGER NOT NULL DEFAULT 0,
    -- 0 while the event waits for what it is to tell (a stopped transaction's cost, priced
    -- after the batch that stopped it): fan-out stops before it, so a charger's events keep
    -- their order; one left unready for a minute goes as it is.
    ready        INTEGER NOT NULL DEFAULT 1,
    -- The event's `data` object, as JSON.
    data         TEXT NOT NULL,
    occurred_at  TEXT NOT NULL,
    -- When cms learnt of it (its gateway's time of receipt): a charger's events from several
    -- sources (its messages, its actions' reports) are fanned out in this order.
    received_at  TEXT NOT NULL,
    created_at   TEXT NOT NULL
);

-- Where the dispatcher has fanned events out to subscriptions up to, and which API replica
-- dispatches (one at a time, under a lease it renews: fencing as smart charging's).
CREATE TABLE webhook_dispatcher (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq         INTEGER NOT NULL DEFAULT 0,
    holder           TEXT,
    lease_until      TEXT
);
INSERT INTO webhook_dispatcher (id, last_seq) VALUES (1, 0);

-- One event to one subscription: `pending` until a 2xx (`delivered`) or the last retry
-- (`failed`). Deliveries of one subscription with the same `subject` go in `id` order.
CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid             TEXT NOT NULL UNIQUE,
    webhook_id       INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_seq        INTEGER NOT NULL REFERENCES webhook_events(seq) ON DELETE CASCADE,
    subject          TEXT NOT NULL,
    -- The body as sent, fixed once (a redelivery sends the same bytes, the same webhook-id).
    body             TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'pending',
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    last_status      INTEGER,
    last_error       TEXT,
    delivered_at     TEXT,
    created_at       TEXT NOT NULL,
    UNIQUE (webhook_id, event_seq)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_in_order ON webhook_deliveries (webhook_id, subject, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_of_webhook ON webhook_deliveries (webhook_id, id);

-- Every attempt of a delivery, for the delivery log.
CREATE TABLE webhook_attempts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id   INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempted_at  TEXT NOT NULL,
    status_code   INTEGER,
    latency_ms    INTEGER NOT NULL,
    error         TEXT
);
CREATE INDEX webhook_attempts_of_delivery ON webhook_attempts (delivery_id, id);
