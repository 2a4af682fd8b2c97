//! What users and operators see of OAuth, and how they end it: registered clients (listed and
//! revoked by the command line) and grants, a user's authorized applications (listed and
//! revoked by the user through the API, or by an operator).
//!
//! A grant is the authorization code the user approved, once exchanged: every access and
//! refresh token descends from it. It is live while it is unrevoked, its client is unrevoked,
//! and one of its refresh tokens is unrevoked and unexpired (so it can still yield an access
//! token). Revoking a client revokes every grant of it and drops its pending codes and
//! authorization requests, in one transaction.

use super::OAuthClient;
use super::grants::revoke_grant;
use crate::tokens::split_scopes;
use crate::{Result, Store, StoreError, format_record_time};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

/// A user's live grant: which application holds it, and with which scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthGrant {
    /// The grant's id (its authorization code's row id).
    pub id: i64,
    /// The client's public `client_id`.
    pub client_id: String,
    pub client_name: String,
    /// The scopes the user approved; a refresh may have narrowed the current access token.
    pub scopes: Vec<String>,
    /// When the user approved it.
    pub created_at: String,
    /// When it last yielded tokens (the code's exchange, or the latest refresh).
    pub updated_at: String,
}

impl<'r> sqlx::FromRow<'r, AnyRow> for OAuthGrant {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let created_at: String = row.try_get("created_at")?;
        let updated_at: Option<String> = row.try_get("updated_at")?;
        Ok(OAuthGrant {
            id: row.try_get("id")?,
            client_id: row.try_get("client_uuid")?,
            client_name: row.try_get("client_name")?,
            scopes: split_scopes(row.try_get("scopes")?),
            updated_at: updated_at.unwrap_or_else(|| created_at.clone()),
            created_at,
        })
    }
}

/// A live client as the command line lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientListing {
    pub client: OAuthClient,
    pub created_at: String,
    /// Live grants: users who authorized it and whose tokens still work.
    pub live_grants: i64,
    /// Authorization requests pending (unexpired, undecided).
    pub pending_requests: i64,
}

/// The conditions of a live grant `g` of client `c`; `$NOW` is the current record time.
const LIVE_GRANT: &str = "g.used = 1 AND g.revoked_at IS NULL AND c.revoked = 0
    AND EXISTS (SELECT 1 FROM oauth_access_tokens a
                JOIN oauth_refresh_tokens r ON r.access_token_id = a.id
                WHERE a.auth_code_id = g.id AND r.revoked = 0 AND r.expires_at > $NOW)";

/// The columns of [`OAuthGrant`].
const GRANT_COLUMNS: &str = "g.id, g.scopes, g.created_at, c.uuid AS client_uuid,
    c.name AS client_name,
    (SELECT MAX(a.created_at) FROM oauth_access_tokens a WHERE a.auth_code_id = g.id) AS updated_at";

/// `LIVE_GRANT` with its time as placeholder `$n`.
fn live_grant(n: usize) -> String {
    LIVE_GRANT.replace("$NOW", &format!("${n}"))
}

impl Store {
    /// Every live client, oldest first.
    pub async fn oauth_clients(&self, now: DateTime<Utc>) -> Result<Vec<ClientListing>> {
        let rows = sqlx::query(&format!(
            "SELECT c.id, c.uuid, c.name, c.redirect_uri, c.created_at,
                (SELECT COUNT(*) FROM oauth_auth_codes g
                 WHERE g.client_id = c.id AND {live}) AS live_grants,
                (SELECT COUNT(*) FROM oauth_authorization_requests p
                 WHERE p.client_id = c.id AND p.expires_at > $1) AS pending_requests
             FROM oauth_clients c WHERE c.revoked = 0 ORDER BY c.id",
            live = live_grant(1)
        ))
        .bind(format_record_time(now))
        .fetch_all(self.db())
        .await?;
        Ok(rows
            .iter()
            .map(|row| ClientListing {
                client: OAuthClient {
                    id: row.get("id"),
                    client_id: row.get("uuid"),
                    name: row.get("name"),
                    redirect_uri: row.get("redirect_uri"),
                },
                created_at: row.get("created_at"),
                live_grants: row.get("live_grants"),
                pending_requests: row.get("pending_requests"),
            })
            .collect())
    }

    /// Revokes the live client with this `client_id`: it can no longer start authorizations or
    /// authenticate, every token it was issued stops working, and its pending codes and
    /// authorization requests are dropped. `false` when there is no such live client.
    /// The console's client ([`super::CONSOLE_CLIENT_ID`]) is refused ([`StoreError::Conflict`]).
    pub async fn revoke_oauth_client(&self, client_id: &str, now: DateTime<Utc>) -> Result<bool> {
        if client_id == super::CONSOLE_CLIENT_ID {
            return Err(StoreError::Conflict(
                "the console's client cannot be revoked (the console would be locked out); \
                 revoke users' grants of it instead"
                    .into(),
            ));
        }
        let now_text = format_record_time(now);
        let mut tx = self.begin_write().await?;
        let id: Option<i64> = sqlx::query_scalar(
            "UPDATE oauth_clients SET revoked = 1, updated_at = $1
             WHERE uuid = $2 AND revoked = 0 RETURNING id",
        )
        .bind(&now_text)
        .bind(client_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(id) = id else { return Ok(false) };
        sqlx::query(
            "UPDATE oauth_auth_codes SET revoked_at = $1
             WHERE client_id = $2 AND used = 1 AND revoked_at IS NULL",
        )
        .bind(&now_text)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        for statement in [
            "UPDATE oauth_refresh_tokens SET revoked = 1 WHERE revoked = 0 AND access_token_id IN
                 (SELECT id FROM oauth_access_tokens WHERE client_id = $1)",
            "UPDATE oauth_access_tokens SET revoked = 1 WHERE client_id = $1 AND revoked = 0",
            // Unused codes have no tokens yet: nothing refers to them.
            "DELETE FROM oauth_auth_codes WHERE client_id = $1 AND used = 0",
            "DELETE FROM oauth_authorization_requests WHERE client_id = $1",
        ] {
            sqlx::query(statement).bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// A page of the user's live grants, newest first, and how many there are.
    pub async fn oauth_grants(
        &self,
        user_id: i64,
        limit: i64,
        offset: i64,
        now: DateTime<Utc>,
    ) -> Result<(Vec<OAuthGrant>, i64)> {
        let now_text = format_record_time(now);
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM oauth_auth_codes g JOIN oauth_clients c ON c.id = g.client_id
             WHERE g.user_id = $1 AND {live}",
            live = live_grant(2)
        ))
        .bind(user_id)
        .bind(&now_text)
        .fetch_one(self.db())
        .await?;
        let page = sqlx::query_as(&format!(
            "SELECT {GRANT_COLUMNS}
             FROM oauth_auth_codes g JOIN oauth_clients c ON c.id = g.client_id
             WHERE g.user_id = $1 AND {live}
             ORDER BY g.id DESC LIMIT $3 OFFSET $4",
            live = live_grant(2)
        ))
        .bind(user_id)
        .bind(&now_text)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }

    /// The user's live grant `id`; `None` when it is revoked, expired, missing or another
    /// user's.
    pub async fn oauth_grant(
        &self,
        user_id: i64,
        id: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<OAuthGrant>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {GRANT_COLUMNS}
             FROM oauth_auth_codes g JOIN oauth_clients c ON c.id = g.client_id
             WHERE g.id = $1 AND g.user_id = $2 AND {live}",
            live = live_grant(3)
        ))
        .bind(id)
        .bind(user_id)
        .bind(format_record_time(now))
        .fetch_optional(self.db())
        .await?)
    }

    /// Who holds the live grant `id` (for the command line, which acts for any user).
    pub async fn oauth_grant_owner(&self, id: i64, now: DateTime<Utc>) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT g.user_id FROM oauth_auth_codes g JOIN oauth_clients c ON c.id = g.client_id
             WHERE g.id = $1 AND {live}",
            live = live_grant(2)
        ))
        .bind(id)
        .bind(format_record_time(now))
        .fetch_optional(self.db())
        .await?)
    }

    /// Revokes the user's grant `id`: every access and refresh token of it stops working at
    /// once. `false` when there is no such unrevoked grant of the user's.
    pub async fn revoke_oauth_grant(
        &self,
        user_id: i64,
        id: i64,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let mine: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM oauth_auth_codes
             WHERE id = $1 AND user_id = $2 AND used = 1 AND revoked_at IS NULL",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&mut *tx)
        .await?;
        if mine.is_none() {
            return Ok(false);
        }
        revoke_grant(&mut tx, id, now).await?;
        tx.commit().await?;
        Ok(true)
    }
}
