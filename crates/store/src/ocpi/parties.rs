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
