//! Authorization requests between `GET /oauth/authorize` and the user's decision.
//!
//! A request is kept server-side; the pages carry only its opaque secret. Logging in binds the
//! user and replaces the secret, so only the page shown to whoever logged in can approve (the
//! approval's CSRF protection), and deciding deletes the request (one decision per request).
//!
//! Anyone can open a request, so their number is bounded: per client address and in all
//! ([`PendingLimits`]); and a request ends after [`MAX_FAILED_LOGINS_PER_REQUEST`] wrong
//! passwords.

use super::{
    AUTH_CODE_TTL, AUTHORIZATION_REQUEST_TTL, CodeChallenge, MAX_FAILED_LOGINS_PER_REQUEST,
    OpaqueSecret, expiry,
};
use crate::tokens::split_scopes;
use crate::{Backend, Result, Store, StoreError, format_record_time};
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
    pub code_challenge: CodeChallenge,
    /// Who opened it: the key of the client's network address (see [`PendingLimits`]).
    pub client_address: String,
}

/// How many live (unexpired, undecided) requests may be pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingLimits {
    /// Opened from one client address.
    pub per_address: i64,
    /// In all: what a stranger with many addresses can make the store hold.
    pub total: i64,
}

impl PendingLimits {
    /// 20 per address (a person signing in to a few applications at once needs a handful), and
    /// 10,000 in all (a few MiB of rows).
    pub const DEFAULT: PendingLimits = PendingLimits {
        per_address: 20,
        total: 10_000,
    };
}

/// Why a request was not kept.
#[derive(Debug, thiserror::Error)]
pub enum BeginError {
    #[error("{0} authorization requests are already pending from this address")]
    TooManyFromAddress(i64),
    #[error("{0} authorization requests are already pending")]
    TooManyPending(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for BeginError {
    fn from(e: sqlx::Error) -> Self {
        BeginError::Store(e.into())
    }
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

/// The PostgreSQL advisory lock that serialises keeping new requests (any number; "oauth" in
/// ASCII), so that concurrent ones cannot both pass the count.
const PENDING_LOCK: i64 = 0x006f_6175_7468;

/// A live request whose secret has been verified.
struct Found {
    id: i64,
    user_id: Option<i64>,
    pending: PendingAuthorization,
}

impl Store {
    /// Keeps a new request, unless `limits` are reached; returns its secret for the login page.
    /// Expired requests are cleared on the way, so abandoned ones do not pile up.
    ///
    /// The limits hold exactly, across API replicas too: SQLite runs one writing statement at a
    /// time, and on PostgreSQL the count and the insert run under one transaction-wide lock.
    pub async fn begin_authorization(
        &self,
        request: &AuthorizationRequest,
        limits: PendingLimits,
        now: DateTime<Utc>,
    ) -> Result<String, BeginError> {
        let now_text = format_record_time(now);
        let mut tx = self.begin_write().await?;
        if self.backend == Backend::Postgres {
            // Selecting the void result through the Any driver would fail: count it.
            sqlx::query("SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock($1)) AS locked")
                .bind(PENDING_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM oauth_authorization_requests WHERE expires_at < $1")
            .bind(&now_text)
            .execute(&mut *tx)
            .await?;
        let secret = OpaqueSecret::generate();
        // One statement counts and inserts, so that on SQLite it holds the write lock for both.
        let kept = sqlx::query(
            "INSERT INTO oauth_authorization_requests (selector, verifier_hash, client_id,
                 redirect_uri, redirect_uri_given, scopes, state, code_challenge, client_address,
                 expires_at, created_at)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
             WHERE (SELECT COUNT(*) FROM oauth_authorization_requests
                    WHERE client_address = $9 AND expires_at > $11) < $12
               AND (SELECT COUNT(*) FROM oauth_authorization_requests
                    WHERE expires_at > $11) < $13",
        )
        .bind(&secret.selector)
        .bind(secret.verifier_hash())
        .bind(request.client)
        .bind(&request.redirect_uri)
        .bind(i64::from(request.redirect_uri_given))
        .bind(request.scopes.join(" "))
        .bind(&request.state)
        .bind(request.code_challenge.digest())
        .bind(&request.client_address)
        .bind(expiry(now, AUTHORIZATION_REQUEST_TTL))
        .bind(&now_text)
        .bind(limits.per_address)
        .bind(limits.total)
        .execute(&mut *tx)
        .await?;
        if kept.rows_affected() == 1 {
            tx.commit().await?;
            return Ok(secret.plain());
        }
        let from_address: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM oauth_authorization_requests
             WHERE client_address = $1 AND expires_at > $2",
        )
        .bind(&request.client_address)
        .bind(&now_text)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        if from_address >= limits.per_address {
            Err(BeginError::TooManyFromAddress(from_address))
        } else {
            Err(BeginError::TooManyPending(limits.total))
        }
    }

    /// Counts a wrong password against the request with this (login page) secret; the
    /// [`MAX_FAILED_LOGINS_PER_REQUEST`]th deletes it. Returns whether the request has ended
    /// (also when it was already gone).
    pub async fn record_failed_login(&self, secret: &str, now: DateTime<Utc>) -> Result<bool> {
        let Some(found) = self.find_request(secret, now).await? else {
            return Ok(true);
        };
        let failed: Option<i64> = sqlx::query_scalar(
            "UPDATE oauth_authorization_requests SET failed_logins = failed_logins + 1
             WHERE id = $1 AND user_id IS NULL RETURNING failed_logins",
        )
        .bind(found.id)
        .fetch_optional(self.db())
        .await?;
        match failed {
            Some(failed) if failed < MAX_FAILED_LOGINS_PER_REQUEST => Ok(false),
            Some(_) => {
                sqlx::query("DELETE FROM oauth_authorization_requests WHERE id = $1")
                    .bind(found.id)
                    .execute(self.db())
                    .await?;
                Ok(true)
            }
            None => Ok(true),
        }
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
        .execute(self.db())
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
        let mut tx = self.begin_write().await?;
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
        .fetch_optional(self.db())
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
