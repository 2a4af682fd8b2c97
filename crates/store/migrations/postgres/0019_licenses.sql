-- Licences (docs/api.md "Licences"): `pro` gates proxy relaying, so the gateways learn of a
-- change of it as of a change of password.
DROP TRIGGER chargers_registry_update ON chargers;
CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash, security_profile, site_id, vendor_role, license_pro ON chargers
    FOR EACH ROW EXECUTE FUNCTION chargers_registry_log();

-- What chargers did before licences meant anything, they keep: relaying for those with proxy
-- servers, load management for those on sites that balance.
UPDATE chargers SET license_pro = 1 WHERE id IN (SELECT charger_id FROM proxy_servers);
UPDATE chargers SET license_smart = 1
    WHERE site_id IN (SELECT id FROM sites WHERE smart_charging <> 'disabled');
