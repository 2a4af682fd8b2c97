//! Token revocation (RFC 7009): whoever holds an access or refresh token may end it. Revoking
//! either ends its whole grant (RFC 7009 §2.1: a refresh token's access tokens go with it, and
//! an access token's refresh token is of no use without it), so every token of that sign-in
//! stops working at once, through the access change log like a grant revoked by its user.

use super::OpaqueSecret;
use super::grants::revoke_grant;
use crate::{Result, Store};
use chrono::{DateTime, Utc};
use sqlx::Row;

/// What a revocation request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRevocation {
    /// The token's grant is revoked now (or was already).
    Revoked,
    /// No such token: nothing to do (RFC 7009 §2.2 answers it as a success).
    Unknown,
    /// The token was issued to another client than the one named: nothing was revoked.
    OtherClient,
}

impl Store {
    /// Revokes the grant of the access or refresh token `token`; when `client_id` is given, only
    /// if the token was issued to that client.
    pub async fn revoke_oauth_token(
        &self,
        token: &str,
        client_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<TokenRevocation> {
        let Some(secret) = OpaqueSecret::parse(token) else {
            return Ok(TokenRevocation::Unknown);
        };
        // Looked up before any write: a stranger's made-up tokens cost reads, never the write
        // lock.
        let mut found = None;
        for lookup in [
            "SELECT a.verifier_hash, a.auth_code_id, c.uuid FROM oauth_access_tokens a
             JOIN oauth_clients c ON c.id = a.client_id WHERE a.selector = $1",
            "SELECT r.verifier_hash, a.auth_code_id, c.uuid FROM oauth_refresh_tokens r
             JOIN oauth_access_tokens a ON a.id = r.access_token_id
             JOIN oauth_clients c ON c.id = a.client_id WHERE r.selector = $1",
        ] {
            let row = sqlx::query(lookup)
                .bind(&secret.selector)
                .fetch_optional(self.db())
                .await?;
            if let Some(row) = row.filter(|row| secret.matches(row.get("verifier_hash"))) {
                found = Some((
                    row.get::<i64, _>("auth_code_id"),
                    row.get::<String, _>("uuid"),
                ));
                break;
            }
        }
        let Some((grant, owner)) = found else {
            return Ok(TokenRevocation::Unknown);
        };
        if client_id.is_some_and(|named| named != owner) {
            return Ok(TokenRevocation::OtherClient);
        }
        // A token's grant never changes: revoking it again is harmless.
        let mut tx = self.begin_write().await?;
        revoke_grant(&mut tx, grant, now).await?;
        tx.commit().await?;
        Ok(TokenRevocation::Revoked)
    }
}
