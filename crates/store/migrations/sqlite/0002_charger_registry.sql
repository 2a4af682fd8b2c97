-- Every change to who may connect, in order: the API publishes these to the gateways' charger
-- registry topic, wherever the change came from (the API, `cms charger add`, an import).
CREATE TABLE charger_registry_changes (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    identity TEXT NOT NULL
);

CREATE TRIGGER chargers_registry_insert AFTER INSERT ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (NEW.identity);
END;

CREATE TRIGGER chargers_registry_update AFTER UPDATE OF identity, password_hash ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (OLD.identity);
    INSERT INTO charger_registry_changes (identity) SELECT NEW.identity WHERE NEW.identity <> OLD.identity;
END;

CREATE TRIGGER chargers_registry_delete AFTER DELETE ON chargers
BEGIN
    INSERT INTO charger_registry_changes (identity) VALUES (OLD.identity);
END;
