//! A team's e-mobility service providers (docs/tariffs.md "Providers"): the team accepts
//! their drivers' id tags at its sites in `id_tags` mode and prices those drivers' sessions
//! with the provider's tariff. A provider's tags are the tags of a team of its own (type
//! [`PROVIDER_TEAM_TYPE`], no members): the id-tag rules, the change log and the gateways'
//! look-up are every team's.

use crate::team_owned::TeamOwned;
use crate::{Quota, Result, Store, StoreError, now_record_time};

/// The type of the team that holds a provider's id tags.
pub const PROVIDER_TEAM_TYPE: &str = "provider";

/// A provider as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Provider {
    pub id: i64,
    pub uuid: String,
    /// The team whose provider it is.
    pub team_id: i64,
    /// The team holding its id tags.
    pub id_tag_team_id: i64,
    pub name: String,
    /// OCPI's party: ISO 3166-1 alpha-2 country and a 3-character party id.
    pub country_code: String,
    pub party_id: String,
    /// What its drivers pay at the team's sites; `None`: the site's tariff.
    pub tariff_uuid: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A provider's fields when written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProvider {
    pub name: String,
    pub country_code: String,
    pub party_id: String,
    /// A tariff of the same team (its row id).
    pub tariff_id: Option<i64>,
}

const COLUMNS: &str = "p.id, p.uuid, p.team_id, p.id_tag_team_id, p.name, p.country_code,
    p.party_id, (SELECT t.uuid FROM tariffs t WHERE t.id = p.tariff_id) AS tariff_uuid,
    p.created_at, p.updated_at";

/// A team's providers, oldest first, by uuid.
const PROVIDERS: TeamOwned = TeamOwned {
    from: "providers p",
    columns: COLUMNS,
    order: "p.id",
    key: "p.uuid",
};

impl Store {
    /// A page of the team's providers, oldest first, and how many it has.
    pub async fn providers(
        &self,
        team_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Provider>, i64)> {
        PROVIDERS.page(self, team_id, limit, offset).await
    }

    /// The team's provider with this uuid.
    pub async fn provider(&self, team_id: i64, uuid: &str) -> Result<Option<Provider>> {
        PROVIDERS.one(self, team_id, uuid).await
    }

    /// Any team's provider with this uuid (for the command line, the operator's).
    pub async fn provider_by_uuid(&self, uuid: &str) -> Result<Option<Provider>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM providers p WHERE p.uuid = $1"
        ))
        .bind(uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// Makes a provider of the team, with the team that will hold its tags.
    pub async fn create_provider(&self, team_id: i64, new: &NewProvider) -> Result<Provider> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let tag_team: i64 = sqlx::query_scalar(
            "INSERT INTO teams (uuid, name, type, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $4) RETURNING id",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(format!("Provider {}", new.name))
        .bind(PROVIDER_TEAM_TYPE)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO providers (uuid, team_id, id_tag_team_id, name, country_code, party_id,
               tariff_id, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
        )
        .bind(&uuid)
        .bind(team_id)
        .bind(tag_team)
        .bind(&new.name)
        .bind(&new.country_code)
        .bind(&new.party_id)
        .bind(new.tariff_id)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        self.enforce_quota(&mut tx, Quota::Providers, team_id)
            .await?;
        tx.commit().await?;
        self.provider(team_id, &uuid)
            .await?
            .ok_or_else(|| StoreError::NotFound("provider".into()))
    }

    /// Replaces the team's provider's fields; `None` when it has no such provider.
    pub async fn replace_provider(
        &self,
        team_id: i64,
        uuid: &str,
        new: &NewProvider,
    ) -> Result<Option<Provider>> {
        let done = sqlx::query(
            "UPDATE providers SET name = $1, country_code = $2, party_id = $3, tariff_id = $4,
               updated_at = $5
             WHERE team_id = $6 AND uuid = $7",
        )
        .bind(&new.name)
        .bind(&new.country_code)
        .bind(&new.party_id)
        .bind(new.tariff_id)
        .bind(now_record_time())
        .bind(team_id)
        .bind(uuid)
        .execute(self.db())
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.provider(team_id, uuid).await
    }

    /// Deletes the team's provider with its id tags (its drivers are no longer accepted);
    /// `false` when it has no such provider.
    pub async fn delete_provider(&self, team_id: i64, uuid: &str) -> Result<bool> {
        let Some(provider) = self.provider(team_id, uuid).await? else {
            return Ok(false);
        };
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM providers WHERE id = $1")
            .bind(provider.id)
            .execute(&mut *tx)
            .await?;
        // Its tags go with its team (the change log tells the gateways).
        sqlx::query("DELETE FROM id_tags WHERE team_id = $1")
            .bind(provider.id_tag_team_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM teams WHERE id = $1")
            .bind(provider.id_tag_team_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}
