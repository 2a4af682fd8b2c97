//! Providers as OCPI parties: the connection of each (its tokens, its endpoints, its roles).

use crate::{Result, Store};

/// A provider's OCPI connection, with what names the party.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Party {
    /// The `ocpi_parties` row.
    pub id: i64,
    pub provider_id: i64,
    pub provider_uuid: String,
    /// The team whose provider it is (the CPO side of the connection).
    pub team_id: i64,
    /// The party's own identity (the provider's).
    pub country_code: String,
    pub party_id: String,
    /// `pending` (it may only read versions and register) or `registered`.
    pub status: String,
    /// The token cms calls the party with, once known.
    pub outgoing_token: Option<String>,
    pub versions_url: Option<String>,
    /// The party's 2.2.1 endpoints, as JSON (`[{"identifier", "role", "url"}]`).
    pub endpoints: Option<String>,
    /// The party's roles from its credentials, as JSON.
    pub roles: Option<String>,
}

impl Party {
    pub fn is_registered(&self) -> bool {
        self.status == "registered"
    }

    /// The URL of the party's `identifier` module in `role` (`RECEIVER` for pushes).
    pub fn endpoint(&self, identifier: &str, role: &str) -> Option<String> {
        let endpoints: serde_json::Value = serde_json::from_str(self.endpoints.as_deref()?).ok()?;
        endpoints.as_array()?.iter().find_map(|e| {
            (e["identifier"] == identifier && e["role"] == role)
                .then(|| e["url"].as_str().map(str::to_string))
                .flatten()
        })
    }
}

pub(crate) const PARTY_COLUMNS: &str = "o.id, o.provider_id, p.uuid AS provider_uuid, p.team_id,
    p.country_code, p.party_id, o.status, o.outgoing_token, o.versions_url, o.endpoints, o.roles";

impl Store {
    /// The party that calls with `token` (its hash, [`super::token_hash`]).
    pub async fn ocpi_party_by_token(&self, token: &str) -> Result<Option<Party>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PARTY_COLUMNS} FROM ocpi_parties o JOIN providers p ON p.id = o.provider_id
             WHERE o.incoming_token_hash = $1"
        ))
        .bind(super::token_hash(token))
        .fetch_optional(self.db())
        .await?)
    }

    /// The OCPI party of a provider, if it has one.
    pub async fn ocpi_party_of_provider(&self, provider_id: i64) -> Result<Option<Party>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PARTY_COLUMNS} FROM ocpi_parties o JOIN providers p ON p.id = o.provider_id
             WHERE o.provider_id = $1"
        ))
        .bind(provider_id)
        .fetch_optional(self.db())
        .await?)
    }
}

/// A party's connection as written: at token A's issue, at registration, at a rotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyConnection {
    /// The SHA-256 of the token the party calls cms with ([`super::token_hash`]).
    pub incoming_token_hash: String,
    pub outgoing_token: Option<String>,
    /// `pending` or `registered`.
    pub status: String,
    pub versions_url: Option<String>,
    pub endpoints: Option<String>,
    pub roles: Option<String>,
}

impl Store {
    /// Writes the provider's connection, replacing the one it had.
    pub async fn ocpi_save_party(
        &self,
        provider_id: i64,
        connection: &PartyConnection,
    ) -> Result<()> {
        let now = crate::now_record_time();
        sqlx::query(
            "INSERT INTO ocpi_parties (provider_id, incoming_token_hash, outgoing_token, status,
               versions_url, endpoints, roles, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
             ON CONFLICT (provider_id) DO UPDATE SET
               incoming_token_hash = EXCLUDED.incoming_token_hash,
               outgoing_token = EXCLUDED.outgoing_token, status = EXCLUDED.status,
               versions_url = EXCLUDED.versions_url, endpoints = EXCLUDED.endpoints,
               roles = EXCLUDED.roles, updated_at = EXCLUDED.updated_at",
        )
        .bind(provider_id)
        .bind(&connection.incoming_token_hash)
        .bind(&connection.outgoing_token)
        .bind(&connection.status)
        .bind(&connection.versions_url)
        .bind(&connection.endpoints)
        .bind(&connection.roles)
        .bind(&now)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Forgets the provider's connection (unregistered): its tokens no longer open anything.
    pub async fn ocpi_delete_party(&self, provider_id: i64) -> Result<bool> {
        let done = sqlx::query("DELETE FROM ocpi_parties WHERE provider_id = $1")
            .bind(provider_id)
            .execute(self.db())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Every registered party (the dispatcher's recipients).
    pub async fn ocpi_registered_parties(&self) -> Result<Vec<Party>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {PARTY_COLUMNS} FROM ocpi_parties o JOIN providers p ON p.id = o.provider_id
             WHERE o.status = 'registered' ORDER BY o.id"
        ))
        .fetch_all(self.db())
        .await?)
    }
}
