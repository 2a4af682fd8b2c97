//! OCPI tokens (docs/ocpi.md, "Tokens"): what each provider's eMSP pushed, one row per (uid,
//! type), and for each the provider's id tag that lets its driver charge (valid: `Accepted`,
//! not valid: `Blocked`), carrying the token's type and whitelist for the gateways. And what a
//! gateway needs to ask a party in real time, read with the id tags' change log.
//!
//! The caller checks the token (cms_ocpi::tokens::Token); the store keeps it as given.

use crate::{Quota, Result, Store, StoreError, now_record_time};
use std::collections::HashMap;

/// A token as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub uid: String,
    pub token_type: String,
    /// The Token object, JSON.
    pub body: String,
    pub whitelist: String,
    pub valid: bool,
    pub last_updated: String,
}

/// A token as written (a PUT, or a PATCH applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenWrite {
    pub uid: String,
    pub token_type: String,
    pub body: String,
    pub whitelist: String,
    pub valid: bool,
    pub last_updated: String,
    /// OCPI's group: the id tag's parent when it fits OCPP's 20 characters.
    pub group_id: Option<String>,
}

/// What a gateway needs to ask a party about its tokens in real time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyLink {
    /// The party's tokens module in the SENDER role (where `POST {url}/{uid}/authorize` goes).
    pub tokens_url: String,
    /// The token cms calls the party with.
    pub token: String,
}

/// The longest parent an OCPP 1.6 tag may have (CiString20).
const PARENT_MAX: usize = 20;

impl Store {
    /// The provider's token `uid` (in any case) of `token_type`.
    pub async fn ocpi_token(
        &self,
        provider_id: i64,
        uid: &str,
        token_type: &str,
    ) -> Result<Option<StoredToken>> {
        type Row = (String, String, String, String, i64, String);
        let row: Option<Row> = sqlx::query_as(
            "SELECT uid, token_type, body, whitelist, valid, last_updated FROM ocpi_tokens
             WHERE provider_id = $1 AND uid_key = $2 AND token_type = $3",
        )
        .bind(provider_id)
        .bind(uid.to_ascii_uppercase())
        .bind(token_type)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(
            |(uid, token_type, body, whitelist, valid, last_updated)| StoredToken {
                uid,
                token_type,
                body,
                whitelist,
                valid: valid != 0,
                last_updated,
            },
        ))
    }

    /// Creates or replaces the provider's token, and makes it the provider's id tag of the
    /// same uid (in any case): `Accepted` when valid, `Blocked` when not, with the token's type
    /// and whitelist. A uid the eMSP has under two types is one id tag, as the token written
    /// last says. A new tag counts in the id-tag quota of the team that has the provider.
    pub async fn ocpi_put_token(&self, provider_id: i64, token: &TokenWrite) -> Result<()> {
        let now = now_record_time();
        let key = token.uid.to_ascii_uppercase();
        let mut tx = self.begin_write().await?;
        let teams: Option<(i64, i64)> =
            sqlx::query_as("SELECT team_id, id_tag_team_id FROM providers WHERE id = $1")
                .bind(provider_id)
                .fetch_optional(&mut *tx)
                .await?;
        let (owner, tag_team) = teams.ok_or_else(|| StoreError::NotFound("provider".into()))?;
        sqlx::query(
            "INSERT INTO ocpi_tokens (provider_id, uid, uid_key, token_type, body, whitelist,
               valid, last_updated, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
             ON CONFLICT (provider_id, uid_key, token_type) DO UPDATE SET uid = excluded.uid,
               body = excluded.body, whitelist = excluded.whitelist, valid = excluded.valid,
               last_updated = excluded.last_updated, updated_at = excluded.updated_at",
        )
        .bind(provider_id)
        .bind(&token.uid)
        .bind(&key)
        .bind(&token.token_type)
        .bind(&token.body)
        .bind(&token.whitelist)
        .bind(i64::from(token.valid))
        .bind(&token.last_updated)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        let status = if token.valid { "Accepted" } else { "Blocked" };
        let parent = (token.group_id.as_deref()).filter(|g| !g.is_empty() && g.len() <= PARENT_MAX);
        sqlx::query(
            "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, parent_id_tag, ocpi_type,
               ocpi_whitelist, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
             ON CONFLICT (team_id, id_tag_key) DO UPDATE SET id_tag = excluded.id_tag,
               status = excluded.status, parent_id_tag = excluded.parent_id_tag,
               ocpi_type = excluded.ocpi_type, ocpi_whitelist = excluded.ocpi_whitelist,
               updated_at = excluded.updated_at",
        )
        .bind(tag_team)
        .bind(&token.uid)
        .bind(&key)
        .bind(status)
        .bind(parent)
        .bind(&token.token_type)
        .bind(&token.whitelist)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        self.enforce_quota(&mut tx, Quota::IdTags, owner).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The party links of the OCPI parties whose providers keep their tags in `teams`: those
    /// registered, with a tokens SENDER endpoint and a token to call it with. A team missing
    /// from the answer has none (no party, or one a gateway cannot ask).
    pub async fn ocpi_party_links(&self, teams: &[i64]) -> Result<HashMap<i64, PartyLink>> {
        if teams.is_empty() {
            return Ok(HashMap::new());
        }
        let in_list = crate::parameters(1, teams.len());
        let select = format!(
            "SELECT p.id_tag_team_id, o.status, o.outgoing_token, o.endpoints
             FROM providers p JOIN ocpi_parties o ON o.provider_id = p.id
             WHERE p.id_tag_team_id IN ({in_list})"
        );
        type Row = (i64, String, Option<String>, Option<String>);
        let mut query = sqlx::query_as::<_, Row>(&select);
        for team in teams {
            query = query.bind(team);
        }
        let rows = query.fetch_all(self.db()).await?;
        Ok(rows
            .into_iter()
            .filter(|(_, status, _, _)| status == "registered")
            .filter_map(|(team, _, token, endpoints)| {
                let tokens_url = tokens_sender(endpoints.as_deref()?)?;
                Some((
                    team,
                    PartyLink {
                        tokens_url,
                        token: token?,
                    },
                ))
            })
            .collect())
    }
}

/// The URL of the tokens module in the SENDER role among a party's endpoints (JSON).
fn tokens_sender(endpoints: &str) -> Option<String> {
    let endpoints: serde_json::Value = serde_json::from_str(endpoints).ok()?;
    endpoints.as_array()?.iter().find_map(|e| {
        let wanted = e["identifier"] == "tokens" && e["role"] == "SENDER";
        wanted.then(|| e["url"].as_str().map(str::to_string))?
    })
}

#[cfg(test)]
mod tests;
