-- Every change to who may use the API and what they see, for the API replicas that hold
-- verified tokens and grants in memory (cms_api::access): each reads this log a few times a
-- second and forgets what a change touched. `kind`: 'token' (a personal access token, by id),
-- 'oauth_token' (an OAuth access token, by id), 'oauth_grant' (every access token of an
-- authorization, by its id), 'oauth_client' (every access token of a client, by its id),
-- 'user' (every token of a user, by id), 'grants' (team membership, site access, a site's owner
-- or a charger's site: every grant held, subject 0). Only the newest rows are kept.
CREATE TABLE access_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    subject_id INTEGER NOT NULL
);

CREATE TRIGGER personal_access_tokens_access_update
AFTER UPDATE OF revoked, scopes, token_hash, user_id ON personal_access_tokens
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('token', OLD.id); END;
CREATE TRIGGER personal_access_tokens_access_delete AFTER DELETE ON personal_access_tokens
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('token', OLD.id); END;

CREATE TRIGGER oauth_access_tokens_access_update
AFTER UPDATE OF revoked, scopes, expires_at, verifier_hash, user_id ON oauth_access_tokens
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_token', OLD.id); END;
CREATE TRIGGER oauth_access_tokens_access_delete AFTER DELETE ON oauth_access_tokens
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_token', OLD.id); END;

CREATE TRIGGER oauth_auth_codes_access_update AFTER UPDATE OF revoked_at ON oauth_auth_codes
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_grant', OLD.id); END;
CREATE TRIGGER oauth_auth_codes_access_delete AFTER DELETE ON oauth_auth_codes
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_grant', OLD.id); END;

CREATE TRIGGER oauth_clients_access_update AFTER UPDATE OF revoked ON oauth_clients
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_client', OLD.id); END;
CREATE TRIGGER oauth_clients_access_delete AFTER DELETE ON oauth_clients
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('oauth_client', OLD.id); END;

CREATE TRIGGER users_access_delete AFTER DELETE ON users
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('user', OLD.id); END;

CREATE TRIGGER team_user_grants_insert AFTER INSERT ON team_user
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER team_user_grants_update AFTER UPDATE ON team_user
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER team_user_grants_delete AFTER DELETE ON team_user
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;

CREATE TRIGGER site_access_grants_insert AFTER INSERT ON site_access
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER site_access_grants_update AFTER UPDATE ON site_access
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER site_access_grants_delete AFTER DELETE ON site_access
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;

CREATE TRIGGER site_access_assets_grants_insert AFTER INSERT ON site_access_assets
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER site_access_assets_grants_delete AFTER DELETE ON site_access_assets
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;

CREATE TRIGGER sites_grants_insert AFTER INSERT ON sites
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER sites_grants_update AFTER UPDATE OF team_id ON sites
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER sites_grants_delete AFTER DELETE ON sites
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;

CREATE TRIGGER chargers_grants_insert AFTER INSERT ON chargers
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER chargers_grants_update AFTER UPDATE OF site_id, identity, uuid ON chargers
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
CREATE TRIGGER chargers_grants_delete AFTER DELETE ON chargers
BEGIN INSERT INTO access_changes (kind, subject_id) VALUES ('grants', 0); END;
