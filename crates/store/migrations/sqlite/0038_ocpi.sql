-- OCPI 2.2.1 in the CPO role (docs/ocpi.md): a team's identity as a CPO, its providers as
-- OCPI parties, and the outbox of what cms pushes to them.

-- The team's own OCPI identity, shown to its providers in the credentials handshake and in
-- every object it publishes (evse_id, country_code, party_id).
CREATE TABLE ocpi_cpo (
    team_id       INTEGER PRIMARY KEY REFERENCES teams(id) ON DELETE CASCADE,
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    name          TEXT NOT NULL,
    website       TEXT,
    updated_at    TEXT NOT NULL
);

-- A provider's OCPI connection. `incoming_token_hash`: the SHA-256 (hex) of the token the
-- party calls cms with (token A until it registers, then token C); `outgoing_token`: the
-- token cms calls the party with (token B, or the party's token A while cms registers).
CREATE TABLE ocpi_parties (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_id          INTEGER NOT NULL UNIQUE REFERENCES providers(id) ON DELETE CASCADE,
    incoming_token_hash  TEXT UNIQUE,
    outgoing_token       TEXT,
    -- 'pending' (token A issued, not yet registered) or 'registered'.
    status               TEXT NOT NULL,
    versions_url         TEXT,
    -- The party's 2.2.1 endpoints (its version details' `endpoints`), as JSON.
    endpoints            TEXT,
    -- The party's roles from its credentials, as JSON.
    roles                TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);

-- The OCPI dispatcher's lease (one API replica pushes at a time) and its cursor over the
-- events outbox (webhook_events.seq).
CREATE TABLE ocpi_dispatcher (
    id           INTEGER PRIMARY KEY,
    holder       TEXT,
    lease_until  TEXT,
    last_seq     INTEGER NOT NULL DEFAULT 0
);
INSERT INTO ocpi_dispatcher (id, last_seq) VALUES (1, 0);

-- What cms pushes to a party, durably, in order per (provider, object).
CREATE TABLE ocpi_pushes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_id      INTEGER NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    -- What orders it: pushes of one object are sent one at a time, oldest first.
    object_key       TEXT NOT NULL,
    -- The party's module it goes to ('locations', 'sessions', 'cdrs', 'tariffs'), or 'url'
    -- when `path` is a whole address (a command's response_url).
    module           TEXT NOT NULL,
    method           TEXT NOT NULL,
    -- After the module's URL (e.g. '/NL/CMS/{location_id}/{evse_uid}'), or the whole address.
    path             TEXT NOT NULL,
    body             TEXT,
    -- 'pending', 'delivered' or 'failed' (retries spent).
    state            TEXT NOT NULL DEFAULT 'pending',
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT NOT NULL,
    last_error       TEXT,
    created_at       TEXT NOT NULL,
    delivered_at     TEXT
);
CREATE INDEX ocpi_pushes_due ON ocpi_pushes (state, next_attempt_at);
CREATE INDEX ocpi_pushes_object ON ocpi_pushes (provider_id, object_key, id);
