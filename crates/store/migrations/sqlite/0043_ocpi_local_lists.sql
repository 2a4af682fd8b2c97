-- eMSPs' tokens in the chargers' local authorization lists (docs/ocpi.md "Tokens"): a site's
-- lists carry the tokens of the providers it is published to (but NEVER ones). Publishing or
-- unpublishing a site is logged as a change of its chargers' registrations, so the list keeper
-- brings their lists up to date (as it does when a site's authorization changes).
CREATE TRIGGER ocpi_publications_lists_insert AFTER INSERT ON ocpi_publications
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id = NEW.site_id;
END;

CREATE TRIGGER ocpi_publications_lists_delete AFTER DELETE ON ocpi_publications
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE site_id = OLD.site_id;
END;
