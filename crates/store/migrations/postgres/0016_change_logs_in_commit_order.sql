-- The change logs are read by cursor (everything after the last sequence number read), so a
-- number must never become visible after a higher one: on PostgreSQL a transaction takes its
-- number at insert and may commit after another that took a higher one, and a reader that had
-- moved past the higher one would never see the lower (a blocked tag missed by the gateways).
-- So the writers of the change logs take turns, to their commit, and each takes its number
-- only once its turn has come. (SQLite has one writer at a time anyway.)
CREATE FUNCTION change_log_in_commit_order() RETURNS trigger AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('cms change logs ' || TG_TABLE_SCHEMA));
    NEW.seq := nextval(pg_get_serial_sequence(quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'seq'));
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER charger_registry_changes_in_commit_order BEFORE INSERT ON charger_registry_changes
    FOR EACH ROW EXECUTE FUNCTION change_log_in_commit_order();
CREATE TRIGGER id_tag_changes_in_commit_order BEFORE INSERT ON id_tag_changes
    FOR EACH ROW EXECUTE FUNCTION change_log_in_commit_order();
