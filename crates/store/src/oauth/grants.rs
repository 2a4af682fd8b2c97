//! The token endpoint's grants: an authorization code or a refresh token for a new access token
//! and refresh token; and access tokens authenticating API requests.
//!
//! Every token descends from one authorization code (its grant). A code or refresh token that
//! is presented again after use revokes the whole grant (RFC 6749 §4.1.2, RFC 6819 §5.2.2.3):
//! one of the two presenters is not who the grant was for. A token authenticates only while its
//! grant and its client are unrevoked, so revoking either ends every token at once, even one
//! issued by a refresh that raced the revocation.

use super::{ACCESS_TOKEN_TTL, OAuthClient, OpaqueSecret, REFRESH_TOKEN_TTL, expiry};
use crate::tokens::split_scopes;
use crate::{Result, Store, StoreError, format_record_time};
use chrono::{DateTime, Utc};
use cms_credentials::verify_secret;
use sqlx::{AnyConnection, Row};

/// Why a grant was refused, as RFC 6749 §5.2 names it, with a description for the client.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidGrant(String),
    #[error("{0}")]
    InvalidScope(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for GrantError {
    fn from(e: sqlx::Error) -> Self {
        GrantError::Store(e.into())
    }
}

fn invalid_grant(description: &str) -> GrantError {
    GrantError::InvalidGrant(description.to_string())
}

/// A new access token and refresh token (plain, shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedTokens {
    pub access_token: String,
    pub refresh_token: String,
    /// Seconds the access token lives.
    pub expires_in: u64,
    pub scopes: Vec<String>,
}

/// Who a grant speaks for.
struct Grant {
    auth_code_id: i64,
    client_id: i64,
    user_id: i64,
    scopes: Vec<String>,
}

impl Store {
    /// Exchanges an authorization code issued to `client` (RFC 6749 §4.1.3, RFC 7636 §4.6).
    /// `redirect_uri` must repeat the authorization request's when that named one; the
    /// `code_verifier` must match the request's challenge (every request has one; a code kept
    /// from before PKCE was required has none, and is refused).
    pub async fn exchange_authorization_code(
        &self,
        client: &OAuthClient,
        code: &str,
        redirect_uri: Option<&str>,
        code_verifier: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<IssuedTokens, GrantError> {
        const INVALID: &str = "The authorization code is invalid.";
        let code = OpaqueSecret::parse(code).ok_or_else(|| invalid_grant(INVALID))?;
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "SELECT id, verifier_hash, client_id, user_id, redirect_uri, scopes, code_challenge,
                    used, expires_at
             FROM oauth_auth_codes WHERE selector = $1",
        )
        .bind(&code.selector)
        .fetch_optional(&mut *tx)
        .await?;
        let row = row
            .filter(|row| code.matches(row.get("verifier_hash")))
            .ok_or_else(|| invalid_grant(INVALID))?;
        let id: i64 = row.get("id");
        if row.get::<i64, _>("client_id") != client.id {
            return Err(invalid_grant(
                "The authorization code was not issued to this client.",
            ));
        }
        if row.get::<i64, _>("used") != 0 {
            revoke_grant(&mut tx, id, now).await?;
            tx.commit().await?;
            return Err(invalid_grant(
                "The authorization code has already been used; the tokens issued for it are revoked.",
            ));
        }
        if row.get::<String, _>("expires_at") <= format_record_time(now) {
            return Err(invalid_grant("The authorization code has expired."));
        }
        let expected_uri: Option<String> = row.get("redirect_uri");
        let uri_ok = match (&expected_uri, redirect_uri) {
            (Some(expected), given) => given == Some(expected.as_str()),
            (None, Some(given)) => given == client.redirect_uri,
            (None, None) => true,
        };
        if !uri_ok {
            return Err(invalid_grant(
                "The redirect_uri does not match the one of the authorization request.",
            ));
        }
        let Some(challenge) = row.get::<Option<String>, _>("code_challenge") else {
            return Err(invalid_grant(
                "The authorization code was issued without PKCE; start the authorization again.",
            ));
        };
        let Some(verifier) = code_verifier else {
            return Err(GrantError::InvalidRequest(
                "The code_verifier is required (PKCE).".into(),
            ));
        };
        if !is_code_verifier(verifier) || !verify_secret(verifier, &challenge).unwrap_or(false) {
            return Err(invalid_grant(
                "The code_verifier does not match the code_challenge.",
            ));
        }
        let claimed =
            sqlx::query("UPDATE oauth_auth_codes SET used = 1 WHERE id = $1 AND used = 0")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        if claimed.rows_affected() != 1 {
            return Err(invalid_grant(
                "The authorization code has already been used.",
            ));
        }
        let grant = Grant {
            auth_code_id: id,
            client_id: client.id,
            user_id: row.get("user_id"),
            scopes: split_scopes(row.get("scopes")),
        };
        let issued = issue_tokens(&mut tx, &grant, now).await?;
        tx.commit().await?;
        Ok(issued)
    }

    /// Exchanges a refresh token issued to `client` for a new access token and refresh token
    /// (RFC 6749 §6); the old pair stops working. `scopes`, when given, must be among the
    /// grant's and narrow the new access token to them.
    pub async fn refresh_access_token(
        &self,
        client: &OAuthClient,
        refresh_token: &str,
        scopes: Option<&[String]>,
        now: DateTime<Utc>,
    ) -> Result<IssuedTokens, GrantError> {
        const INVALID: &str = "The refresh token is invalid.";
        let token = OpaqueSecret::parse(refresh_token).ok_or_else(|| invalid_grant(INVALID))?;
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "SELECT r.id, r.verifier_hash, r.revoked, r.expires_at, r.access_token_id,
                    a.auth_code_id, a.client_id, a.user_id, a.scopes,
                    g.revoked_at AS grant_revoked_at, c.revoked AS client_revoked
             FROM oauth_refresh_tokens r JOIN oauth_access_tokens a ON a.id = r.access_token_id
                  JOIN oauth_auth_codes g ON g.id = a.auth_code_id
                  JOIN oauth_clients c ON c.id = a.client_id
             WHERE r.selector = $1",
        )
        .bind(&token.selector)
        .fetch_optional(&mut *tx)
        .await?;
        let row = row
            .filter(|row| token.matches(row.get("verifier_hash")))
            .ok_or_else(|| invalid_grant(INVALID))?;
        let granted = split_scopes(row.get("scopes"));
        let grant = Grant {
            auth_code_id: row.get("auth_code_id"),
            client_id: row.get("client_id"),
            user_id: row.get("user_id"),
            scopes: match scopes {
                Some(asked) => asked.to_vec(),
                None => granted.clone(),
            },
        };
        if grant.client_id != client.id {
            return Err(invalid_grant(
                "The refresh token was not issued to this client.",
            ));
        }
        let grant_ended = row.get::<Option<String>, _>("grant_revoked_at").is_some()
            || row.get::<i64, _>("client_revoked") != 0;
        if grant_ended {
            return Err(invalid_grant("The refresh token has been revoked."));
        }
        if row.get::<i64, _>("revoked") != 0 {
            revoke_grant(&mut tx, grant.auth_code_id, now).await?;
            tx.commit().await?;
            return Err(invalid_grant(
                "The refresh token has been revoked; the tokens issued after it are revoked too.",
            ));
        }
        if row.get::<String, _>("expires_at") <= format_record_time(now) {
            return Err(invalid_grant("The refresh token has expired."));
        }
        if let Some(extra) = grant.scopes.iter().find(|s| !granted.contains(s)) {
            return Err(GrantError::InvalidScope(format!(
                "The scope {extra:?} was not granted to the refresh token."
            )));
        }
        let claimed = sqlx::query(
            "UPDATE oauth_refresh_tokens SET revoked = 1 WHERE id = $1 AND revoked = 0",
        )
        .bind(row.get::<i64, _>("id"))
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() != 1 {
            return Err(invalid_grant("The refresh token has already been used."));
        }
        sqlx::query("UPDATE oauth_access_tokens SET revoked = 1 WHERE id = $1")
            .bind(row.get::<i64, _>("access_token_id"))
            .execute(&mut *tx)
            .await?;
        let issued = issue_tokens(&mut tx, &grant, now).await?;
        tx.commit().await?;
        Ok(issued)
    }
}

/// RFC 7636 §4.1: 43 to 128 characters of `[A-Za-z0-9-._~]`.
fn is_code_verifier(text: &str) -> bool {
    (43..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

async fn issue_tokens(
    conn: &mut AnyConnection,
    grant: &Grant,
    now: DateTime<Utc>,
) -> Result<IssuedTokens> {
    let access = OpaqueSecret::generate();
    let created_at = format_record_time(now);
    let access_id: i64 = sqlx::query_scalar(
        "INSERT INTO oauth_access_tokens (selector, verifier_hash, auth_code_id, client_id, user_id,
             scopes, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(&access.selector)
    .bind(access.verifier_hash())
    .bind(grant.auth_code_id)
    .bind(grant.client_id)
    .bind(grant.user_id)
    .bind(grant.scopes.join(" "))
    .bind(expiry(now, ACCESS_TOKEN_TTL))
    .bind(&created_at)
    .fetch_one(&mut *conn)
    .await?;
    let refresh = OpaqueSecret::generate();
    sqlx::query(
        "INSERT INTO oauth_refresh_tokens (selector, verifier_hash, access_token_id, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&refresh.selector)
    .bind(refresh.verifier_hash())
    .bind(access_id)
    .bind(expiry(now, REFRESH_TOKEN_TTL))
    .bind(&created_at)
    .execute(&mut *conn)
    .await?;
    Ok(IssuedTokens {
        access_token: access.plain(),
        refresh_token: refresh.plain(),
        expires_in: ACCESS_TOKEN_TTL.as_secs(),
        scopes: grant.scopes.clone(),
    })
}

/// Revokes the grant of authorization code `auth_code_id` and every access and refresh token
/// of it.
pub(super) async fn revoke_grant(
    conn: &mut AnyConnection,
    auth_code_id: i64,
    now: DateTime<Utc>,
) -> Result<()> {
    sqlx::query("UPDATE oauth_auth_codes SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(format_record_time(now))
        .bind(auth_code_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE oauth_refresh_tokens SET revoked = 1
         WHERE access_token_id IN (SELECT id FROM oauth_access_tokens WHERE auth_code_id = $1)",
    )
    .bind(auth_code_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE oauth_access_tokens SET revoked = 1 WHERE auth_code_id = $1")
        .bind(auth_code_id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
