//! Authorization requests between `GET /oauth/authorize` and the user's decision.
//!
//! A request is kept server-side; the pages carry only its opaque secret. Logging in binds the
//! user and replaces the secret, so only the page shown to whoever logged in can approve (the
//! approval's CSRF protection), and deciding deletes the request (one decision per request).

use super::{AUTH_CODE_TTL, AUTHORIZATION_REQUEST_TTL, CodeChallenge, OpaqueSecret, expiry};
use crate::tokens::split_scopes;
use crate::{Result, Store, format_record_time};
use chrono::{DateTime, Utc};
use sqlx::Row;

/// What a client asked for, once its client id and redirect URI have been checked.
#[derive(Debug, Clone)]
pub struct AuthorizationRequest {
    /// The client's row id.
    pub client: i64,
    /// Where the decision goes.
    pub redirect_uri: String,
    /// Whether the request named `redirect_uri` (else the registered one is used, and the token
    /// request need not repeat it).
    pub redirect_uri_given: bool,
    pub scopes: Vec<String>,
    pub state: Option<String>,
    /// PKCE: what the code verifier must match.
    pub code_challenge: Option<CodeChallenge>,
}

/// A live request, as the login and approval pages show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAuthorization {
    pub client_name: String,
    pub scopes: Vec<String>,
    /// Whether a user has logged in (the secret is then the approval page's).
    pub logged_in: bool,
}

/// A decided request: where to send the browser, with the code when approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub redirect_uri: String,
    pub state: Option<String>,
    /// The authorization code; `None` when the user denied.
    pub code: Option<String>,
}

/// A live request whose secret has been verified.
struct Found {
    id: i64,
    user_id: Option<i64>,
    pending: PendingAuthorization,
}

impl Store {
    /// Keeps a new request; returns its secret for the login page. Expired requests are
    /// cleared on the way, so abandoned ones do not pile up.
    pub async fn begin_authorization(
        &self,
        request: &AuthorizationRequest,
        now: DateTime<Utc>,
    ) -> Result<String> {
        sqlx::query("DELETE FROM oauth_authorization_requests WHERE expires_at < $1")
            .bind(format_record_time(now))
            .execute(&self.pool)
            .await?;
        let secret = OpaqueSecret::generate();
        sqlx::query(
            "INSERT INTO oauth_authorization_requests (selector, verifier_hash, client_id,
                 redirect_uri, redirect_uri_given, scopes, state, code_challenge, expires_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind(&secret.selector)
        .bind(secret.verifier_hash())
        .bind(request.client)
        .bind(&request.redirect_uri)
        .bind(i64::from(request.redirect_uri_given))
        .bind(request.scopes.join(" "))
        .bind(&request.state)
        .bind(request.code_challenge.as_ref().map(CodeChallenge::digest))
        .bind(expiry(now, AUTHORIZATION_REQUEST_TTL))
        .bind(format_record_time(now))
        .execute(&self.pool)
        .await?;
        Ok(secret.plain())
    }

    /// The live request with this secret.
    pub async fn pending_authorization(
        &self,
        secret: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<PendingAuthorization>> {
        let found = self.find_request(secret, now).await?;
        Ok(found.map(|found| found.pending))
    }

    /// Binds `user_id` to the request with this (login page) secret; returns the approval
    /// page's new secret. `None` when the request is gone, expired, or already logged in to.
    pub async fn log_in_authorization(
        &self,
        secret: &str,
        user_id: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<String>> {
        let Some(found) = self.find_request(secret, now).await? else {
            return Ok(None);
        };
        if found.user_id.is_some() {
            return Ok(None);
        }
        let approval = OpaqueSecret::generate();
        let done = sqlx::query(
            "UPDATE oauth_authorization_requests
             SET selector = $1, verifier_hash = $2, user_id = $3, expires_at = $4
             WHERE id = $5 AND user_id IS NULL",
        )
        .bind(&approval.selector)
        .bind(approval.verifier_hash())
        .bind(user_id)
        .bind(expiry(now, AUTHORIZATION_REQUEST_TTL))
        .bind(found.id)
        .execute(&self.pool)
        .await?;
        Ok((done.rows_affected() == 1).then(|| approval.plain()))
    }

    /// The user's decision on the request with this (approval page) secret: the request is
    /// gone afterwards; approving issues a code. `None` when the request is gone, expired, or
    /// nobody has logged in to it.
    pub async fn decide_authorization(
        &self,
        secret: &str,
        approve: bool,
        now: DateTime<Utc>,
    ) -> Result<Option<Decision>> {
        let Some(Found {
            id,
            user_id: Some(user_id),
            ..
        }) = self.find_request(secret, now).await?
        else {
            return Ok(None);
        };
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "DELETE FROM oauth_authorization_requests WHERE id = $1
             RETURNING client_id, redirect_uri, redirect_uri_given, scopes, state, code_challenge",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        // Decided meanwhile by another submission of the same page.
        let Some(row) = row else { return Ok(None) };
        let redirect_uri: String = row.get("redirect_uri");
        let code = if approve {
            let code = OpaqueSecret::generate();
            let must_repeat =
                (row.get::<i64, _>("redirect_uri_given") != 0).then_some(&redirect_uri);
            sqlx::query(
                "INSERT INTO oauth_auth_codes (selector, verifier_hash, client_id, user_id,
                     redirect_uri, scopes, code_challenge, expires_at, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(&code.selector)
            .bind(code.verifier_hash())
            .bind(row.get::<i64, _>("client_id"))
            .bind(user_id)
            .bind(must_repeat)
            .bind(row.get::<String, _>("scopes"))
            .bind(row.get::<Option<String>, _>("code_challenge"))
            .bind(expiry(now, AUTH_CODE_TTL))
            .bind(format_record_time(now))
            .execute(&mut *tx)
            .await?;
            Some(code.plain())
        } else {
            None
        };
        tx.commit().await?;
        Ok(Some(Decision {
            redirect_uri,
            state: row.get("state"),
            code,
        }))
    }

    /// The live (unexpired) request with this secret.
    async fn find_request(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<Found>> {
        let Some(secret) = OpaqueSecret::parse(secret) else {
            return Ok(None);
        };
        let row = sqlx::query(
            "SELECT r.id, r.verifier_hash, r.scopes, r.user_id, c.name
             FROM oauth_authorization_requests r JOIN oauth_clients c ON c.id = r.client_id
             WHERE r.selector = $1 AND r.expires_at > $2",
        )
        .bind(&secret.selector)
        .bind(format_record_time(now))
        .fetch_optional(&self.pool)
        .await?;
        Ok(row
            .filter(|row| secret.matches(row.get("verifier_hash")))
            .map(|row| {
                let user_id: Option<i64> = row.get("user_id");
                Found {
                    id: row.get("id"),
                    user_id,
                    pending: PendingAuthorization {
                        client_name: row.get("name"),
                        scopes: split_scopes(row.get("scopes")),
                        logged_in: user_id.is_some(),
                    },
                }
            }))
    }
}
