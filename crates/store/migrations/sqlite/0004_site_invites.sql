-- Invites to a site: the owner team invites an e-mail address; whoever holds that address and
-- the token accepts for one of their teams, which then reaches the site with the access the
-- invite describes. The token is stored only hashed (it is a credential).
CREATE TABLE site_invites (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    site_id                INTEGER NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
    -- Lowercase, as users' e-mail addresses are stored.
    email                  TEXT NOT NULL,
    token_hash             TEXT NOT NULL,
    invited_by_user_id     INTEGER REFERENCES users(id) ON DELETE SET NULL,
    -- On: the accepting team becomes the site's owner.
    transfer_ownership     INTEGER NOT NULL DEFAULT 0,
    -- The sensitive-data access the accepting team gets, and until when.
    data_access            INTEGER NOT NULL DEFAULT 0,
    data_access_expires_at TEXT,
    -- Off: the accepting team sees only the chargers listed in site_invite_assets.
    can_access_all_assets  INTEGER NOT NULL DEFAULT 1,
    expires_at             TEXT NOT NULL,
    -- Set once: an invite is used at most once.
    accepted_at            TEXT,
    accepted_by_team_id    INTEGER REFERENCES teams(id) ON DELETE SET NULL,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);

CREATE TABLE site_invite_assets (
    invite_id  INTEGER NOT NULL REFERENCES site_invites(id) ON DELETE CASCADE,
    charger_id INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    PRIMARY KEY (invite_id, charger_id)
);

CREATE INDEX site_invites_by_site ON site_invites (site_id);
