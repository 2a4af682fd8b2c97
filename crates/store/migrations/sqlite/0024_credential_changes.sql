-- A charger's new Basic-auth password (and security profile) on its way to the charger as its
-- AuthorizationKey, by the ChangeConfiguration action `action_uuid`: it becomes the charger's
-- credential only once the charger accepts it (crates/store/src/actions/batch.rs), the old
-- one working until then. Removed when that action ends, however it ends.
CREATE TABLE charger_credential_changes (
    action_uuid      TEXT PRIMARY KEY,
    charger_id       INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    password_hash    TEXT NOT NULL,
    security_profile INTEGER NOT NULL,
    created_at       TEXT NOT NULL
);
