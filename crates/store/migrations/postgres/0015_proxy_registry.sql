-- A charger's proxy set-up (its vendor role and proxy servers) is part of its registration for
-- the gateways, which relay its traffic: a change is logged like a change of password, so it
-- reaches the gateway holding the charger without a reconnect.
DROP TRIGGER chargers_registry_update ON chargers;
CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash, security_profile, site_id, vendor_role ON chargers
    FOR EACH ROW EXECUTE FUNCTION chargers_registry_log();

CREATE FUNCTION proxy_servers_registry_log() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = OLD.charger_id;
        RETURN OLD;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id IN (OLD.charger_id, NEW.charger_id);
        RETURN NEW;
    END IF;
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = NEW.charger_id;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

-- Not on an update of the connection status: what the gateway reports is no change of set-up.
CREATE TRIGGER proxy_servers_registry_log
    AFTER INSERT OR DELETE OR UPDATE OF charger_id, position, websocket_url, role ON proxy_servers
    FOR EACH ROW EXECUTE FUNCTION proxy_servers_registry_log();

-- How the gateway holding the charger is connected to each proxy server (`connected`,
-- `disconnected`), as it last reported, and when it last connected.
ALTER TABLE proxy_servers ADD COLUMN connection_status TEXT NOT NULL DEFAULT 'disconnected';
ALTER TABLE proxy_servers ADD COLUMN last_connected_at TEXT;
-- When the gateway said so: a report older than the one kept (an upstream of a replaced set-up
-- saying goodbye late) changes nothing.
ALTER TABLE proxy_servers ADD COLUMN connection_status_at TEXT;
