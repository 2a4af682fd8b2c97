-- Teams other than a site's owner reach it through site access, granted by an accepted invite.
-- Flags are integers 0/1 (as everywhere in this schema), timestamps record-time text.
CREATE TABLE site_access (
    id                          INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id                     INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    team_id                     INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    -- Sensitive data (transactions' id tags, meter readings) needs this on, and unexpired.
    sensitive_data              INTEGER NOT NULL DEFAULT 0,
    sensitive_data_expires_at   TEXT,
    sensitive_data_requested_at TEXT,
    -- Off: the team sees only the chargers listed in site_access_assets.
    can_access_all_assets       INTEGER NOT NULL DEFAULT 1,
    created_at                  TEXT NOT NULL,
    updated_at                  TEXT NOT NULL,
    UNIQUE (site_id, team_id)
);

CREATE TABLE site_access_assets (
    site_access_id INTEGER NOT NULL REFERENCES site_access(id) ON DELETE CASCADE,
    charger_id     INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    PRIMARY KEY (site_access_id, charger_id)
);

CREATE INDEX site_access_by_team ON site_access (team_id);
CREATE INDEX team_user_by_user ON team_user (user_id);
CREATE INDEX chargers_by_site ON chargers (site_id);
