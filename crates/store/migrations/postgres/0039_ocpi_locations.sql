-- OCPI locations (docs/ocpi.md "Locations and tariffs"): what a site's Location needs beyond
-- the site's own fields, and the providers each site is published to. A site without a row
-- in ocpi_publications is private: no party sees it.

-- A site as an OCPI Location: its coordinates (decimal text, as OCPI writes them), its
-- parking type, facilities (a JSON array of OCPI Facility values) and opening times (an OCPI
-- Hours object as JSON; NULL: open 24/7).
CREATE TABLE ocpi_sites (
    site_id        BIGINT PRIMARY KEY REFERENCES sites(id) ON DELETE CASCADE,
    latitude       TEXT NOT NULL,
    longitude      TEXT NOT NULL,
    parking_type   TEXT,
    facilities     TEXT NOT NULL DEFAULT '[]',
    opening_times  TEXT,
    updated_at     TEXT NOT NULL
);

-- The providers (of the site's owner team) a site is published to: their OCPI parties pull
-- and are pushed its Location, EVSEs and tariff.
CREATE TABLE ocpi_publications (
    site_id      BIGINT NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    provider_id  BIGINT NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (site_id, provider_id)
);
CREATE INDEX ocpi_publications_by_provider ON ocpi_publications (provider_id, site_id);
