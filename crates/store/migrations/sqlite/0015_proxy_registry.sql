-- A charger's proxy set-up (its vendor role and proxy servers) is part of its registration for
-- the gateways, which relay its traffic: a change is logged like a change of password, so it
-- reaches the gateway holding the charger without a reconnect.
DROP TRIGGER chargers_registry_update;
CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash, security_profile, site_id, vendor_role ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (OLD.identity);
    INSERT INTO charger_registry_changes (identity) SELECT NEW.identity WHERE NEW.identity <> OLD.identity;
END;

CREATE TRIGGER proxy_servers_registry_insert AFTER INSERT ON proxy_servers
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = NEW.charger_id;
END;

-- Not on an update of the connection status: what the gateway reports is no change of set-up.
CREATE TRIGGER proxy_servers_registry_update AFTER UPDATE OF charger_id, position, websocket_url, role ON proxy_servers
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id IN (OLD.charger_id, NEW.charger_id);
END;

CREATE TRIGGER proxy_servers_registry_delete AFTER DELETE ON proxy_servers
BEGIN
    INSERT INTO charger_registry_changes (identity) SELECT identity FROM chargers WHERE id = OLD.charger_id;
END;

-- How the gateway holding the charger is connected to each proxy server (`connected`,
-- `disconnected`), as it last reported, and when it last connected.
ALTER TABLE proxy_servers ADD COLUMN connection_status TEXT NOT NULL DEFAULT 'disconnected';
ALTER TABLE proxy_servers ADD COLUMN last_connected_at TEXT;
-- When the gateway said so: a report older than the one kept (an upstream of a replaced set-up
-- saying goodbye late) changes nothing.
ALTER TABLE proxy_servers ADD COLUMN connection_status_at TEXT;
