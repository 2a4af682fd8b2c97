-- Security of the stations (docs/ocpp201.md "Security"): what each station told of its security
-- events (SecurityEventNotification, 2.0.1 and 1.6's security extension), and the
-- certificates cms signed for it (SignCertificate answered by CertificateSigned).

-- A station's security events: its newest 1,000 are kept (older ones deleted as new ones come).
CREATE TABLE station_security_events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id   INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    type         TEXT NOT NULL,
    -- The station's time of the event (record-time text).
    occurred_at  TEXT NOT NULL,
    tech_info    TEXT,
    -- Whether OCPP 2.0.1's Appendix 1 marks the type critical.
    critical     INTEGER NOT NULL DEFAULT 0,
    -- When the gateway received it.
    received_at  TEXT NOT NULL
);
CREATE INDEX station_security_events_of_charger ON station_security_events (charger_id, id);

-- A certificate cms signed for a station (its own CA, or the external CA's hook). The newest of
-- a station is its current one, tracked to its end and renewed before it.
CREATE TABLE station_certificates (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id          INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    -- The serial number, hexadecimal.
    serial              TEXT NOT NULL,
    not_after           TEXT NOT NULL,
    -- SHA-256 of the certificate's DER, hexadecimal.
    fingerprint         TEXT NOT NULL,
    signed_at           TEXT NOT NULL,
    -- When cms last asked the station for a new CSR to renew it (at most once a day).
    renewal_asked_at    TEXT
);
CREATE INDEX station_certificates_of_charger ON station_certificates (charger_id, id);
CREATE INDEX station_certificates_ending ON station_certificates (not_after);
