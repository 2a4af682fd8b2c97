//! OAuth clients: applications registered with a name, one redirect URI and a secret.

use crate::{Result, Store, StoreError, now_record_time};
use cms_credentials::{hash_secret, random_token, verify_secret};
use sqlx::Row;

/// A registered client (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// The row id, which codes and tokens refer to.
    pub id: i64,
    /// The public `client_id` (a uuid).
    pub client_id: String,
    pub name: String,
    pub redirect_uri: String,
}

/// Checks a redirect URI a client registers: absolute, `http`/`https` or a private-use scheme
/// of a native app (`com.example.app:/callback`, RFC 8252 §7.1, which has a dot), no fragment
/// (RFC 6749 §3.1.2), no whitespace. Other schemes (`javascript:`, `data:`) are refused.
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err(format!("{uri:?} is not an absolute URI"));
    };
    let scheme = scheme.to_ascii_lowercase();
    let scheme_ok = scheme
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic());
    if !scheme_ok || !(scheme == "http" || scheme == "https" || scheme.contains('.')) {
        return Err(format!(
            "{uri:?}: the scheme must be http, https or a private-use scheme like com.example.app"
        ));
    }
    if (scheme == "http" || scheme == "https") && rest.trim_start_matches("//").is_empty() {
        return Err(format!("{uri:?} has no host"));
    }
    if uri.contains('#') || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{uri:?} must not have a fragment or whitespace"));
    }
    Ok(())
}

impl Store {
    /// Registers a client; returns it with its secret, the only time the secret is seen.
    pub async fn create_oauth_client(
        &self,
        name: &str,
        redirect_uri: &str,
    ) -> Result<(OAuthClient, String)> {
        check_redirect_uri(redirect_uri).map_err(StoreError::Conflict)?;
        let secret = random_token(40);
        let client_id = uuid::Uuid::new_v4().to_string();
        let now = now_record_time();
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO oauth_clients (uuid, name, secret_hash, redirect_uri, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
        )
        .bind(&client_id)
        .bind(name)
        .bind(hash_secret(&secret))
        .bind(redirect_uri)
        .bind(&now)
        .fetch_one(self.db())
        .await?;
        let client = OAuthClient {
            id,
            client_id,
            name: name.to_string(),
            redirect_uri: redirect_uri.to_string(),
        };
        Ok((client, secret))
    }

    /// The live client with this `client_id`.
    pub async fn oauth_client(&self, client_id: &str) -> Result<Option<OAuthClient>> {
        Ok(self
            .oauth_client_row(client_id)
            .await?
            .map(|(client, _)| client))
    }

    /// The live client with this `client_id`, if `secret` is its secret.
    pub async fn authenticate_oauth_client(
        &self,
        client_id: &str,
        secret: &str,
    ) -> Result<Option<OAuthClient>> {
        Ok(self
            .oauth_client_row(client_id)
            .await?
            .filter(|(_, hash)| verify_secret(secret, hash).unwrap_or(false))
            .map(|(client, _)| client))
    }

    async fn oauth_client_row(&self, client_id: &str) -> Result<Option<(OAuthClient, String)>> {
        let row = sqlx::query(
            "SELECT id, uuid, name, redirect_uri, secret_hash FROM oauth_clients
             WHERE uuid = $1 AND revoked = 0",
        )
        .bind(client_id)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(|row| {
            let client = OAuthClient {
                id: row.get("id"),
                client_id: row.get("uuid"),
                name: row.get("name"),
                redirect_uri: row.get("redirect_uri"),
            };
            (client, row.get("secret_hash"))
        }))
    }
}
