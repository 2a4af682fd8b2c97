-- The chargers' local authorization lists (SendLocalList): what cms knows each charger to hold,
-- and the one call about its list in flight. See docs/actions.md, "Local authorisation lists".
CREATE TABLE charger_local_lists (
    charger_id          BIGINT PRIMARY KEY REFERENCES chargers(id) ON DELETE CASCADE,
    -- The list version the charger last accepted (0: nothing sent yet).
    version             BIGINT NOT NULL DEFAULT 0,
    -- The entries it holds since, as JSON: [{"idTag", "key", "status", "expiryDate",
    -- "parentIdTag"}] by key. A differential update is the difference to the desired list.
    entries             TEXT NOT NULL DEFAULT '[]',
    -- The next update is a full one: none was accepted yet, or the charger answered Failed or
    -- VersionMismatch, or its version was not the one cms knew of, or an answer was lost.
    needs_full          BIGINT NOT NULL DEFAULT 1,
    -- The session whose list version was checked (GetLocalListVersion) after it connected.
    checked_session     TEXT,
    -- The session on which the charger said it has no local list (NotSupported, listVersion
    -- -1, NotImplemented): nothing more is sent to it until it connects again.
    unsupported_session TEXT,
    -- The call in flight (at most one per charger): its action's uuid, `check` (GetLocalListVersion),
    -- `full` or `differential`, the session it went to, when it was claimed; for an update the
    -- version it sends and the entries the charger holds once it accepts.
    pending_action      TEXT,
    pending_kind        TEXT,
    pending_session     TEXT,
    pending_at          TEXT,
    pending_version     BIGINT,
    pending_entries     TEXT,
    -- No new attempt before then (after a failure that would fail again at once).
    retry_after         TEXT,
    -- Bumped by every write: a claim is made only on the state it was computed from, so that
    -- of several API replicas exactly one sends a given update.
    revision            BIGINT NOT NULL DEFAULT 0,
    updated_at          TEXT NOT NULL
);

-- Turning a site's list on (or off) changes what its chargers should hold: logged like the
-- other changes of who may charge there, which the list keeper follows too.
CREATE TRIGGER sites_local_list_update AFTER UPDATE OF local_authorization_list ON sites
    FOR EACH ROW EXECUTE FUNCTION sites_registry_log();
