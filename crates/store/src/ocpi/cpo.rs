//! A team's own identity as an OCPI CPO: its country code and party id (in every EVSE id and
//! object it publishes) and its business details (in the credentials it gives providers).

use crate::{Result, Store};

/// A team's CPO identity.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Cpo {
    pub team_id: i64,
    pub country_code: String,
    pub party_id: String,
    pub name: String,
    pub website: Option<String>,
    pub updated_at: String,
}

impl Store {
    /// The team's CPO identity, if it has one.
    pub async fn ocpi_cpo(&self, team_id: i64) -> Result<Option<Cpo>> {
        Ok(sqlx::query_as(
            "SELECT team_id, country_code, party_id, name, website, updated_at
             FROM ocpi_cpo WHERE team_id = $1",
        )
        .bind(team_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// Sets the team's CPO identity; the one written.
    pub async fn ocpi_save_cpo(
        &self,
        team_id: i64,
        country_code: &str,
        party_id: &str,
        name: &str,
        website: Option<&str>,
    ) -> Result<Cpo> {
        let now = crate::now_record_time();
        sqlx::query(
            "INSERT INTO ocpi_cpo (team_id, country_code, party_id, name, website, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (team_id) DO UPDATE SET country_code = EXCLUDED.country_code,
               party_id = EXCLUDED.party_id, name = EXCLUDED.name, website = EXCLUDED.website,
               updated_at = EXCLUDED.updated_at",
        )
        .bind(team_id)
        .bind(country_code)
        .bind(party_id)
        .bind(name)
        .bind(website)
        .bind(&now)
        .execute(self.db())
        .await?;
        Ok(Cpo {
            team_id,
            country_code: country_code.into(),
            party_id: party_id.into(),
            name: name.into(),
            website: website.map(str::to_string),
            updated_at: now,
        })
    }

    /// When the provider's OCPI connection was made and last changed.
    pub async fn ocpi_party_times(&self, provider_id: i64) -> Result<Option<(String, String)>> {
        Ok(
            sqlx::query_as(
                "SELECT created_at, updated_at FROM ocpi_parties WHERE provider_id = $1",
            )
            .bind(provider_id)
            .fetch_optional(self.db())
            .await?,
        )
    }
}
