-- Smart charging of OCPP 2.0.1 stations (block K, docs/smart-charging.md "What a 2.0.1 station
-- tells"): what a station reports of its own limits and its EVs, kept as it told them.

-- An external limit on an EVSE (evse_id 0: the whole station), by its source (EMS, SO, CSO,
-- Other), from NotifyChargingLimit until a ClearedChargingLimit of the same source and EVSE.
-- `limit_amps` is the lowest limit in A of its schedules (null when it has none in A): what
-- the balancer respects. `charging_schedule` is the schedules as told (JSON array, or null).
CREATE TABLE station_charging_limits (
    charger_id         BIGINT NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    evse_id            BIGINT NOT NULL,
    source             TEXT NOT NULL,
    grid_critical      BIGINT,
    limit_amps         DOUBLE PRECISION,
    charging_schedule  TEXT,
    reported_at        TEXT NOT NULL,
    PRIMARY KEY (charger_id, evse_id, source)
);

-- What the EV on an EVSE needs (NotifyEVChargingNeeds' chargingNeeds, JSON) and the schedule
-- it chose (NotifyEVChargingSchedule's chargingSchedule, JSON, with its timeBase), the latest
-- of each.
CREATE TABLE ev_charging_needs (
    charger_id           BIGINT NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    evse_id              BIGINT NOT NULL,
    charging_needs       TEXT,
    max_schedule_tuples  BIGINT,
    needs_at             TEXT,
    charging_schedule    TEXT,
    schedule_time_base   TEXT,
    schedule_at          TEXT,
    PRIMARY KEY (charger_id, evse_id)
);

-- The profiles a station reported (ReportChargingProfiles) in answer to the latest
-- GetChargingProfiles (`request_id`): a report of a new request replaces the older ones.
CREATE TABLE reported_charging_profiles (
    charger_id         BIGINT NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    request_id         BIGINT NOT NULL,
    evse_id            BIGINT NOT NULL,
    profile_id         BIGINT NOT NULL,
    source             TEXT NOT NULL,
    charging_profile   TEXT NOT NULL,
    reported_at        TEXT NOT NULL,
    PRIMARY KEY (charger_id, evse_id, profile_id, source)
);
