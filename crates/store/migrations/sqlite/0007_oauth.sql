-- Authentication beyond the command line: users log in with a password to approve OAuth
-- clients; personal access tokens record when they were last used; OAuth 2.0 clients, pending
-- authorization requests, authorization codes, access and refresh tokens.
--
-- Every secret is stored only as a salted digest (cms_credentials::hash_secret). An opaque
-- secret is `<selector>.<verifier>`: the selector finds the row, the verifier is checked
-- against the digest.

ALTER TABLE users ADD COLUMN password_hash TEXT;

-- Written at most about once a minute per token, so that authenticating stays a read.
ALTER TABLE personal_access_tokens ADD COLUMN last_used_at TEXT;

CREATE TABLE oauth_clients (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The public `client_id`.
    uuid         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    revoked      INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

-- Between GET /oauth/authorize and the user's decision. Its secret is carried by the login and
-- approval forms; logging in binds the user and replaces the secret, so only the browser that
-- logged in can approve (which is the approval's CSRF protection).
CREATE TABLE oauth_authorization_requests (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    selector              TEXT NOT NULL UNIQUE,
    verifier_hash         TEXT NOT NULL,
    client_id             INTEGER NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    -- Where the decision is sent; `redirect_uri_given` 0 when the request named none (the
    -- client's registered one is used, and the token request need not repeat it).
    redirect_uri          TEXT NOT NULL,
    redirect_uri_given    INTEGER NOT NULL,
    scopes                TEXT NOT NULL,
    state                 TEXT,
    -- PKCE: a digest (cms_credentials form) that the code_verifier must match.
    code_challenge        TEXT,
    user_id               INTEGER REFERENCES users(id) ON DELETE CASCADE,
    expires_at            TEXT NOT NULL,
    created_at            TEXT NOT NULL
);
CREATE INDEX oauth_authorization_requests_by_expiry ON oauth_authorization_requests (expires_at);

CREATE TABLE oauth_auth_codes (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    selector       TEXT NOT NULL UNIQUE,
    verifier_hash  TEXT NOT NULL,
    client_id      INTEGER NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id        INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- The redirect_uri the token request must repeat; NULL when authorize named none.
    redirect_uri   TEXT,
    scopes         TEXT NOT NULL,
    code_challenge TEXT,
    used           INTEGER NOT NULL DEFAULT 0,
    expires_at     TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

-- Every access and refresh token descends from one authorization code (`auth_code_id`), across
-- refreshes: a replayed code or refresh token revokes the whole grant.
CREATE TABLE oauth_access_tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    selector      TEXT NOT NULL UNIQUE,
    verifier_hash TEXT NOT NULL,
    auth_code_id  INTEGER NOT NULL REFERENCES oauth_auth_codes(id) ON DELETE CASCADE,
    client_id     INTEGER NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    scopes        TEXT NOT NULL,
    revoked       INTEGER NOT NULL DEFAULT 0,
    expires_at    TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX oauth_access_tokens_by_grant ON oauth_access_tokens (auth_code_id);

CREATE TABLE oauth_refresh_tokens (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    selector        TEXT NOT NULL UNIQUE,
    verifier_hash   TEXT NOT NULL,
    access_token_id INTEGER NOT NULL REFERENCES oauth_access_tokens(id) ON DELETE CASCADE,
    revoked         INTEGER NOT NULL DEFAULT 0,
    expires_at      TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX oauth_refresh_tokens_by_access_token ON oauth_refresh_tokens (access_token_id);
