-- OCPP 2.0.1 stations (docs/decisions.md "A 2.0.1 EVSE is the reference's connector").
-- A station's EVSE is a connector row (connector_id = evseId): the connector within it that the
-- newest StatusNotification named, its raw 2.0.1 status, and that notification's timestamp
-- (an older one sent late does not overwrite it). All null for a 1.6 charger.
ALTER TABLE connectors ADD COLUMN evse_id INTEGER;
ALTER TABLE connectors ADD COLUMN evse_connector_id INTEGER;
ALTER TABLE connectors ADD COLUMN ocpp_status TEXT;
ALTER TABLE connectors ADD COLUMN ocpp_status_at TEXT;

-- A 2.0.1 transaction: the station's own transactionId (a string), unique per charger, and what
-- its TransactionEvents have set so far with the seqNo that set each field (JSON), so that an
-- earlier event arriving late takes its place. Null for 1.6, whose ocpp_transaction_id is the
-- gateway's (positive) number; a 2.0.1 row's ocpp_transaction_id is minus its id.
ALTER TABLE transactions ADD COLUMN station_transaction_id TEXT;
ALTER TABLE transactions ADD COLUMN assembly TEXT;
CREATE UNIQUE INDEX transactions_by_station_id ON transactions (charger_id, station_transaction_id);
