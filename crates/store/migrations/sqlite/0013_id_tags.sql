-- Who may charge: id tags owned by teams, each site's authorization mode, and the change log
-- the gateways follow (they answer Authorize and StartTransaction from memory, never from here).

-- An id tag (an RFID card's uid, an app's token): OCPP CiString20, compared case-insensitively
-- as chargers compare them. `id_tag` is kept as written; `id_tag_key` is its ASCII-uppercase
-- form, the unique key within the team and the key gateways look tags up by.
CREATE TABLE id_tags (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id       INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    id_tag        TEXT NOT NULL,
    id_tag_key    TEXT NOT NULL,
    -- Accepted, Blocked, Expired or Invalid (OCPP 1.6 AuthorizationStatus).
    status        TEXT NOT NULL,
    expiry_date   TEXT,
    parent_id_tag TEXT,
    name          TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (team_id, id_tag_key)
);

-- Every change of a tag, in order, for the gateways (`cms up` follows it; the API publishes it to
-- the id-tags topic for `cms gateway`).
CREATE TABLE id_tag_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id    INTEGER NOT NULL,
    id_tag_key TEXT NOT NULL
);

CREATE TRIGGER id_tags_log_insert AFTER INSERT ON id_tags
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key) VALUES (NEW.team_id, NEW.id_tag_key);
END;

CREATE TRIGGER id_tags_log_update AFTER UPDATE ON id_tags
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key) VALUES (OLD.team_id, OLD.id_tag_key);
    INSERT INTO id_tag_changes (team_id, id_tag_key) SELECT NEW.team_id, NEW.id_tag_key
        WHERE NEW.team_id <> OLD.team_id OR NEW.id_tag_key <> OLD.id_tag_key;
END;

CREATE TRIGGER id_tags_log_delete AFTER DELETE ON id_tags
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key) VALUES (OLD.team_id, OLD.id_tag_key);
END;

-- A site's authorization: 'open' (every tag Accepted) or 'id_tags' (the tags of its owner team
-- and of the teams with access to it). `local_authorization_list`: cms keeps the chargers' local
-- lists equal to those tags. ("authorization" itself is a reserved word in PostgreSQL.)
ALTER TABLE sites ADD COLUMN authorization_mode TEXT NOT NULL DEFAULT 'open';
ALTER TABLE sites ADD COLUMN local_authorization_list INTEGER NOT NULL DEFAULT 0;

-- Which tags apply to a charger is part of its registration for the gateways: a change of its
-- site, of the site's mode or owner, or of who has access to the site is logged like a change
-- of password.
DROP TRIGGER chargers_registry_update;
CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash, security_profile, site_id ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (OLD.identity);
    INSERT INTO charger_registry_changes (identity) SELECT NEW.identity WHERE NEW.identity <> OLD.identity;
END;

CREATE TRIGGER sites_registry_update AFTER UPDATE OF authorization_mode, team_id ON sites
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id = NEW.id;
END;

CREATE TRIGGER site_access_registry_insert AFTER INSERT ON site_access
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id = NEW.site_id;
END;

CREATE TRIGGER site_access_registry_update AFTER UPDATE OF can_access_all_assets, team_id, site_id ON site_access
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id IN (OLD.site_id, NEW.site_id);
END;

CREATE TRIGGER site_access_registry_delete AFTER DELETE ON site_access
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id = OLD.site_id;
END;

CREATE TRIGGER site_access_assets_registry_insert AFTER INSERT ON site_access_assets
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = NEW.charger_id;
END;

CREATE TRIGGER site_access_assets_registry_delete AFTER DELETE ON site_access_assets
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = OLD.charger_id;
END;

-- How the gateway answered the idTag of a StartTransaction (NULL: Accepted, or recorded before
-- cms checked tags). A refused start still gets a transactionId and is recorded with this.
ALTER TABLE transactions ADD COLUMN id_tag_status TEXT;
