-- The signed meter readings a station gave for a transaction (docs/ocpi.md "The CDR"): a 1.6
-- StopTransaction's SignedData sampled values, a 2.0.1 TransactionEvent Started's or Ended's
-- signedMeterValues, kept as given for the OCPI CDR's signed_data.
CREATE TABLE transaction_signed_values (
    transaction_id  INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,
    -- The message that gave it (StopTransaction, Started, Ended) and its place in it: a batch
    -- the bus replays writes nothing twice.
    message         TEXT NOT NULL,
    position        INTEGER NOT NULL,
    -- Start, End or Intermediate.
    nature          TEXT NOT NULL,
    -- The energy register it signs, as sent (empty when the station gave none).
    plain_data      TEXT NOT NULL,
    signed_data     TEXT NOT NULL,
    -- OCMF, the 2.0.1 station's encodingMethod, or UNKNOWN.
    encoding_method TEXT NOT NULL,
    public_key      TEXT,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (transaction_id, message, position)
);
