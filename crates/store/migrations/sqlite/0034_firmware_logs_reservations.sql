-- Firmware updates, log uploads and reservations (issue 45, blocks L, N and H; docs/ocpp201.md,
-- "Firmware, logs and reservations").

-- The last status a charger told of its firmware update (1.6 FirmwareStatusNotification or
-- SignedFirmwareStatusNotification, 2.0.1 FirmwareStatusNotification) and of its log upload
-- (1.6 DiagnosticsStatusNotification or LogStatusNotification, 2.0.1 LogStatusNotification):
-- one row a charger, written by the materialiser; a status older than the one kept is ignored.
CREATE TABLE charger_transfers (
    charger_id           INTEGER PRIMARY KEY REFERENCES chargers(id) ON DELETE CASCADE,
    firmware_status      TEXT,
    -- The update's `requestId` (2.0.1, and 1.6's signed update); NULL for 1.6's own.
    firmware_request_id  INTEGER,
    firmware_updated_at  TEXT,
    log_status           TEXT,
    log_request_id       INTEGER,
    log_updated_at       TEXT
);

-- A reservation cms made on a charger (ReserveNow): `id` is the OCPP reservationId sent, so it is
-- unique per charger (and across them). `connector_id` is the 1.6 connector (0: any) or the 2.0.1
-- EVSE (0: any, no `evseId` sent). `status`: pending (sent, not answered), active, refused
-- (`station_status` says why), used, cancelled, expired, removed.
CREATE TABLE reservations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id      INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    connector_id    INTEGER NOT NULL,
    id_tag          TEXT NOT NULL,
    parent_id_tag   TEXT,
    expires_at      TEXT NOT NULL,
    status          TEXT NOT NULL,
    -- The station's answer to ReserveNow (`Accepted`, `Occupied`, ...) or, when it gave none,
    -- how the action ended (`timed_out`, `failed`, ...).
    station_status  TEXT,
    -- The ReserveNow action (its uuid in the charger's audit log).
    action_uuid     TEXT,
    ended_at        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX reservations_of_charger ON reservations (charger_id, id);
CREATE INDEX reservations_in_force ON reservations (status, expires_at);
