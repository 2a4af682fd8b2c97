-- A priced transaction's readings, one row per minute of the readings' own clock
-- (docs/tariffs.md "What the periods are made of"): a charger sending readings out of order,
-- or by the thousand, no longer adds a row each. A row holds the minute's earliest energy
-- register reading (the one nearest the minute's start, where a tariff's times of day fall)
-- and its last status change (the parking state from then on).
CREATE TABLE transaction_minutes (
    transaction_id BIGINT NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    -- `2026-02-10T09:05`: the record time's first 16 characters.
    minute         TEXT NOT NULL,
    energy_at      TEXT,
    energy_wh      BIGINT,
    parking_at     TEXT,
    parking        BIGINT,
    PRIMARY KEY (transaction_id, minute)
);

-- The readings kept so far, carried over by the same rule.
INSERT INTO transaction_minutes (transaction_id, minute, energy_at, energy_wh)
SELECT transaction_id, minute, at, energy_wh FROM (
    SELECT transaction_id, SUBSTR(at, 1, 16) AS minute, at, energy_wh,
        ROW_NUMBER() OVER (PARTITION BY transaction_id, SUBSTR(at, 1, 16) ORDER BY at) AS n
    FROM transaction_readings WHERE energy_wh IS NOT NULL) earliest
WHERE n = 1;
INSERT INTO transaction_minutes (transaction_id, minute, parking_at, parking)
SELECT transaction_id, minute, at, parking FROM (
    SELECT transaction_id, SUBSTR(at, 1, 16) AS minute, at, parking,
        ROW_NUMBER() OVER (PARTITION BY transaction_id, SUBSTR(at, 1, 16) ORDER BY at DESC) AS n
    FROM transaction_readings WHERE parking IS NOT NULL) latest
WHERE n = 1
ON CONFLICT (transaction_id, minute) DO UPDATE
    SET parking_at = excluded.parking_at, parking = excluded.parking;

DROP TABLE transaction_readings;
