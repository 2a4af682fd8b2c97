-- The internet domains a team claims (example.com): users whose e-mail address is at one of them
-- are meant to belong to the team. Informational for now: nobody joins a team automatically.
-- Domains are stored lowercased, so the unique key catches Example.com beside example.com.
CREATE TABLE team_domains (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id    INTEGER NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    domain     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (team_id, domain)
);
