-- E-mobility service providers (docs/tariffs.md "Providers"): a team accepts the drivers of
-- its providers at its sites and prices them with the provider's tariff. A provider's id tags
-- are kept as the tags of a team of its own (type `provider`, no members), so that the
-- gateways, the change log and the tags' rules are those of every team's tags.
CREATE TABLE providers (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid            TEXT NOT NULL UNIQUE,
    team_id         INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    id_tag_team_id  INTEGER NOT NULL REFERENCES teams(id),
    name            TEXT NOT NULL,
    country_code    TEXT NOT NULL,
    party_id        TEXT NOT NULL,
    tariff_id       INTEGER REFERENCES tariffs(id),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX providers_of_team ON providers (team_id, id);

ALTER TABLE transactions ADD COLUMN provider_uuid TEXT;

-- The owner team's providers' tags apply to its sites in `id_tags` mode: a provider coming or
-- going changes the registration of every charger of the team's sites.
CREATE TRIGGER providers_registry_insert AFTER INSERT ON providers
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT c.identity FROM chargers c
        JOIN sites s ON s.id = c.site_id WHERE s.team_id = NEW.team_id;
END;

CREATE TRIGGER providers_registry_delete AFTER DELETE ON providers
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT c.identity FROM chargers c
        JOIN sites s ON s.id = c.site_id WHERE s.team_id = OLD.team_id;
END;
