-- The OCPP version a charger last connected with: `1.6` or `2.0.1` (its `connected` event's
-- subprotocol without the `ocpp` prefix); NULL until it first connected.
ALTER TABLE chargers ADD COLUMN ocpp_version TEXT;
