-- OCPI commands (docs/ocpi.md "Commands"): what a provider's eMSP asked cms to do at one of
-- its chargers, the action (charger_actions) that carries it, and the CommandResult pushed to
-- the eMSP's response_url once the action ended.
CREATE TABLE ocpi_commands (
    id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_id              INTEGER NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    -- START_SESSION, STOP_SESSION, UNLOCK_CONNECTOR, RESERVE_NOW or CANCEL_RESERVATION.
    command                  TEXT NOT NULL,
    -- Where the CommandResult goes (a push of module 'url', object 'command:{id}').
    response_url             TEXT NOT NULL,
    charger_id               INTEGER REFERENCES chargers(id) ON DELETE SET NULL,
    -- The action taken (charger_actions.uuid); null while being taken, or when none was.
    action_uuid              TEXT,
    -- The OCPI ids the command named, as sent.
    location_id              TEXT,
    evse_uid                 TEXT,
    connector_id             TEXT,
    session_id               TEXT,
    reservation_id           TEXT,
    authorization_reference  TEXT,
    token_uid                TEXT,
    -- cms's reservation (reservations.id: the OCPP reservationId) a RESERVE_NOW made or a
    -- CANCEL_RESERVATION cancels.
    cms_reservation_id       INTEGER REFERENCES reservations(id) ON DELETE SET NULL,
    -- The CommandResponse's result (ACCEPTED, REJECTED); null while the action is taken.
    response                 TEXT,
    -- The CommandResult pushed once the action ended (ACCEPTED, REJECTED, TIMEOUT, ...).
    result                   TEXT,
    created_at               TEXT NOT NULL,
    finished_at              TEXT
);
CREATE INDEX ocpi_commands_by_action ON ocpi_commands (action_uuid);
CREATE INDEX ocpi_commands_of_provider ON ocpi_commands (provider_id, command, id);
