-- eMSPs' tokens in the chargers' local authorization lists (docs/ocpi.md "Tokens"): a site's
-- lists carry the tokens of the providers it is published to (but NEVER ones). Publishing or
-- unpublishing a site is logged as a change of its chargers' registrations, so the list keeper
-- brings their lists up to date (as it does when a site's authorization changes).
CREATE FUNCTION ocpi_publications_lists_log() RETURNS trigger AS $$
BEGIN
    INSERT INTO charger_registry_changes (identity)
        SELECT identity FROM chargers WHERE site_id = COALESCE(NEW.site_id, OLD.site_id);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER ocpi_publications_lists_change AFTER INSERT OR DELETE ON ocpi_publications
    FOR EACH ROW EXECUTE FUNCTION ocpi_publications_lists_log();
