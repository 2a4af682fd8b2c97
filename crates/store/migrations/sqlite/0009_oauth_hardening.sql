-- OAuth hardening: pending authorization requests remember the client address that opened them
-- (so that one address can hold only so many) and how many logins failed on them (the request
-- ends after a few); a grant (the authorization code its tokens descend from) can be revoked as
-- a whole, which every token of it checks.

-- The address's key as the API computed it (an IPv4 address, an IPv6 /64, or `unknown`).
-- Rows from before this migration expire within minutes; they count as `unknown`.
ALTER TABLE oauth_authorization_requests ADD COLUMN client_address TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE oauth_authorization_requests ADD COLUMN failed_logins INTEGER NOT NULL DEFAULT 0;
CREATE INDEX oauth_authorization_requests_by_address
    ON oauth_authorization_requests (client_address, expires_at);

-- Set when the user, an operator or a replayed code or refresh token ends the grant; tokens of
-- a revoked grant stop authenticating even if one was issued concurrently with the revocation.
ALTER TABLE oauth_auth_codes ADD COLUMN revoked_at TEXT;
CREATE INDEX oauth_auth_codes_by_user ON oauth_auth_codes (user_id);
CREATE INDEX oauth_auth_codes_by_client ON oauth_auth_codes (client_id);
CREATE INDEX oauth_access_tokens_by_client ON oauth_access_tokens (client_id);
