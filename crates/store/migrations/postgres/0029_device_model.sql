-- Chargers > Settings of an OCPP 2.0.1 station: its device model, one row per attribute of a
-- variable of a component, as its NotifyReports listed it and accepted SetVariables left it.
-- `key` is the flattened name the REST API shows (cms_store::device_model::variable_key): one
-- key per component (+instance, EVSE, connector), variable (+instance) and attribute type.
-- A secret (write-only, or named like a password) keeps no value.
CREATE TABLE charger_variables (
    charger_id         BIGINT NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    key                TEXT NOT NULL,
    component          TEXT NOT NULL,
    component_instance TEXT,
    evse_id            BIGINT,
    connector_id       BIGINT,
    variable           TEXT NOT NULL,
    variable_instance  TEXT,
    -- Actual, Target, MinSet or MaxSet.
    attribute_type     TEXT NOT NULL,
    value              TEXT,
    -- ReadWrite, ReadOnly or WriteOnly.
    mutability         TEXT NOT NULL,
    persistent         BIGINT,
    constant           BIGINT,
    data_type          TEXT,
    unit               TEXT,
    min_limit          DOUBLE PRECISION,
    max_limit          DOUBLE PRECISION,
    values_list        TEXT,
    updated_at         TEXT NOT NULL,
    PRIMARY KEY (charger_id, key)
);
