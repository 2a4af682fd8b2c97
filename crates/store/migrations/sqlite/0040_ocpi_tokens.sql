-- OCPI 2.2.1 Tokens (docs/ocpi.md, "Tokens"): the tokens each provider's eMSP pushes to cms as
-- a CPO. Each token is also one of the provider's id tags (its team's, see 0020_providers.sql),
-- so the gateways answer for it from memory and the id tags' change log carries it; the id tag
-- carries the token's type and whitelist, which tell a gateway whether to ask the eMSP first.

-- A token as its eMSP pushed it, one per (provider, uid, type): OCPI's uid is a CiString, so
-- `uid_key` (its ASCII uppercase, as id tags' keys) is what is unique and looked up.
CREATE TABLE ocpi_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_id   INTEGER NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    uid           TEXT NOT NULL,
    uid_key       TEXT NOT NULL,
    -- AD_HOC_USER, APP_USER, OTHER or RFID.
    token_type    TEXT NOT NULL,
    -- The Token object, JSON, as cms answers a GET with it.
    body          TEXT NOT NULL,
    -- ALWAYS, ALLOWED, ALLOWED_OFFLINE or NEVER.
    whitelist     TEXT NOT NULL,
    valid         INTEGER NOT NULL,
    last_updated  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (provider_id, uid_key, token_type)
);

-- An id tag that is an OCPI token: its type and whitelist (NULL for every other tag).
ALTER TABLE id_tags ADD COLUMN ocpi_type TEXT;
ALTER TABLE id_tags ADD COLUMN ocpi_whitelist TEXT;

-- A change of a provider's OCPI connection reaches the gateways on the id tags' change log, as
-- a change of its team's tag '' (no tag has that key): what a real-time authorisation needs
-- (the party's tokens URL and outgoing token) is read with it.
CREATE TRIGGER ocpi_parties_log_insert AFTER INSERT ON ocpi_parties
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key)
        SELECT id_tag_team_id, '' FROM providers WHERE id = NEW.provider_id;
END;

CREATE TRIGGER ocpi_parties_log_update AFTER UPDATE ON ocpi_parties
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key)
        SELECT id_tag_team_id, '' FROM providers WHERE id = NEW.provider_id;
END;

-- A party that unregisters takes its tokens with it: they open nothing any more. (A provider
-- deleted takes its party, its tokens and all its tags anyway.)
CREATE TRIGGER ocpi_parties_log_delete AFTER DELETE ON ocpi_parties
BEGIN
    INSERT INTO id_tag_changes (team_id, id_tag_key)
        SELECT id_tag_team_id, '' FROM providers WHERE id = OLD.provider_id;
    DELETE FROM id_tags WHERE ocpi_type IS NOT NULL
        AND team_id = (SELECT id_tag_team_id FROM providers WHERE id = OLD.provider_id);
    DELETE FROM ocpi_tokens WHERE provider_id = OLD.provider_id;
END;
