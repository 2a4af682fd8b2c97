-- The operator console's OAuth client, present in every store: public (no secret: the empty
-- digest verifies no secret), first-party, PKCE S256 required like every client's. Its
-- redirect URI is not stored: the API takes only `<scheme>://<the request's Host>/console/`
-- (cms_store::oauth::CONSOLE_CLIENT_ID). It cannot be revoked.
INSERT INTO oauth_clients (uuid, name, secret_hash, redirect_uri, created_at, updated_at)
VALUES ('cms-console', 'cms console', '', '/console/',
        to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000000Z"'),
        to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000000Z"'))
ON CONFLICT (uuid) DO NOTHING;

-- A team's transactions across its chargers, newest first (GET /api/v3/teams/{team}/transactions):
-- walked in start order, stopping at the page's end, when the team has many chargers.
CREATE INDEX transactions_by_start_time ON transactions (started_at, id);

-- The same listing finds a team's own sites by their owner.
CREATE INDEX sites_by_team ON sites (team_id);
