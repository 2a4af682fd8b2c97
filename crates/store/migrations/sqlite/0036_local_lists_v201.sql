-- Local authorisation lists of OCPP 2.0.1 stations (docs/ocpp201.md, "Local authorisation
-- lists"): the reports a station ended (the NotifyReport without `tbc`), so that the list
-- keeper waits for the base report asked after a boot, which holds the station's
-- LocalAuthListCtrlr limits, before its first update (as it waits for 1.6's GetConfiguration).
-- A charger keeps the report ends of the hour before its newest (older ones are dropped as
-- new ones come).
CREATE TABLE charger_report_ends (
    charger_id  INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    -- The report's requestId (the GetBaseReport's, for the read after a boot).
    request_id  INTEGER NOT NULL,
    ended_at    TEXT NOT NULL,
    PRIMARY KEY (charger_id, request_id)
);

-- A ClearCache is due once the charger's list is in step: an update took out an entry it
-- held Accepted while its authorisation cache is on (AuthCacheCtrlr.Enabled in 2.0.1,
-- AuthorizationCacheEnabled in 1.6), so that the cache cannot go on accepting the tag.
ALTER TABLE charger_local_lists ADD COLUMN clear_cache INTEGER NOT NULL DEFAULT 0;
