-- Each charger's OCPP security profile: 0 no credentials, 1 Basic auth, 2 Basic auth over TLS,
-- 3 a client certificate over TLS. Chargers registered before had profile 1 when they had a
-- password and 0 when not. A change of profile is a change of who may connect: logged for the
-- gateways like a change of password.
ALTER TABLE chargers ADD COLUMN security_profile INTEGER NOT NULL DEFAULT 0;
UPDATE chargers SET security_profile = 1 WHERE password_hash IS NOT NULL;

DROP TRIGGER chargers_registry_update;
CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash, security_profile ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (OLD.identity);
    INSERT INTO charger_registry_changes (identity) SELECT NEW.identity WHERE NEW.identity <> OLD.identity;
END;
