-- Tariff versions (docs/tariffs.md "Versions"): an edit makes a new version and keeps the old
-- ones, so a transaction is priced with the version in force when the gateway received its
-- start, even when the store learns of that start after the edit.

-- The tariff's current version.
ALTER TABLE tariffs ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- Every version of every tariff, a deleted tariff's too: a version is never changed nor removed.
-- `tariff_id` is the tariff's row (kept after the row is deleted: ids are never reused);
-- `valid_from` is when the version took effect, in record time form.
CREATE TABLE tariff_versions (
    tariff_id   INTEGER NOT NULL,
    tariff_uuid TEXT NOT NULL,
    version     INTEGER NOT NULL,
    name        TEXT NOT NULL,
    currency    TEXT NOT NULL,
    body        TEXT NOT NULL,
    valid_from  TEXT NOT NULL,
    PRIMARY KEY (tariff_id, version)
);

-- Existing tariffs become version 1, in force since their last edit.
INSERT INTO tariff_versions (tariff_id, tariff_uuid, version, name, currency, body, valid_from)
SELECT id, uuid, 1, name, currency, body, updated_at FROM tariffs;

-- The version a transaction is priced with (its copy of the tariff is that version's body);
-- NULL for a transaction started before versions, which keeps its copy all the same.
ALTER TABLE transactions ADD COLUMN tariff_version INTEGER;
