//! Sites as OCPI Locations (docs/ocpi.md "Locations and tariffs"): each site's roaming
//! settings (what a Location needs beyond the site's own fields) and the providers it is
//! published to (here); what a party may pull of them, as the
//! facts cms-ocpi maps ([`pull`]); the tariffs that price its drivers there ([`tariffs`]); the
//! pushes that tell parties of changes ([`pushes`]). A site no provider is published to is
//! private.

mod pull;
pub mod pushes;
mod tariffs;
#[cfg(test)]
mod tests;

pub use pull::{Publication, Window};

use crate::{Result, Store, now_record_time};

/// A site's roaming settings, with the providers it is published to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRoaming {
    pub latitude: String,
    pub longitude: String,
    /// An OCPI ParkingType, if set.
    pub parking_type: Option<String>,
    /// OCPI Facility values.
    pub facilities: Vec<String>,
    /// An OCPI Hours object as JSON; `None`: open 24/7.
    pub opening_times: Option<String>,
    /// The providers' uuids, oldest provider first.
    pub provider_uuids: Vec<String>,
    pub updated_at: String,
}

/// A site's roaming settings as written: every field replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSiteRoaming {
    pub latitude: String,
    pub longitude: String,
    pub parking_type: Option<String>,
    pub facilities: Vec<String>,
    pub opening_times: Option<String>,
    /// Providers (ids) of the site's owner team.
    pub provider_ids: Vec<i64>,
}

/// Who a site is published to after a write, and who it no longer is (provider ids).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Republication {
    pub published: Vec<i64>,
    pub unpublished: Vec<i64>,
}

#[derive(sqlx::FromRow)]
struct SettingsRow {
    latitude: String,
    longitude: String,
    parking_type: Option<String>,
    facilities: String,
    opening_times: Option<String>,
    updated_at: String,
}

impl Store {
    /// The site's roaming settings, if they were ever set.
    pub async fn ocpi_site_roaming(&self, site_id: i64) -> Result<Option<SiteRoaming>> {
        let row: Option<SettingsRow> = sqlx::query_as(
            "SELECT latitude, longitude, parking_type, facilities, opening_times, updated_at
             FROM ocpi_sites WHERE site_id = $1",
        )
        .bind(site_id)
        .fetch_optional(self.db())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let provider_uuids: Vec<String> = sqlx::query_scalar(
            "SELECT p.uuid FROM ocpi_publications x JOIN providers p ON p.id = x.provider_id
             WHERE x.site_id = $1 ORDER BY p.id",
        )
        .bind(site_id)
        .fetch_all(self.db())
        .await?;
        Ok(Some(SiteRoaming {
            latitude: row.latitude,
            longitude: row.longitude,
            parking_type: row.parking_type,
            facilities: serde_json::from_str(&row.facilities).unwrap_or_default(),
            opening_times: row.opening_times,
            provider_uuids,
            updated_at: row.updated_at,
        }))
    }

    /// Replaces the site's roaming settings and the providers it is published to: those it
    /// keeps keep the time they were first published at.
    pub async fn ocpi_save_site_roaming(
        &self,
        site_id: i64,
        new: &NewSiteRoaming,
    ) -> Result<Republication> {
        let now = now_record_time();
        let facilities = serde_json::to_string(&new.facilities).expect("strings serialise");
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO ocpi_sites (site_id, latitude, longitude, parking_type, facilities,
               opening_times, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (site_id) DO UPDATE SET latitude = EXCLUDED.latitude,
               longitude = EXCLUDED.longitude, parking_type = EXCLUDED.parking_type,
               facilities = EXCLUDED.facilities, opening_times = EXCLUDED.opening_times,
               updated_at = EXCLUDED.updated_at",
        )
        .bind(site_id)
        .bind(&new.latitude)
        .bind(&new.longitude)
        .bind(&new.parking_type)
        .bind(&facilities)
        .bind(&new.opening_times)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        let before: Vec<i64> = sqlx::query_scalar(
            "SELECT provider_id FROM ocpi_publications WHERE site_id = $1 ORDER BY provider_id",
        )
        .bind(site_id)
        .fetch_all(&mut *tx)
        .await?;
        let mut published = new.provider_ids.clone();
        published.sort_unstable();
        published.dedup();
        let unpublished: Vec<i64> = (before.iter())
            .filter(|p| !published.contains(p))
            .copied()
            .collect();
        for provider in &unpublished {
            sqlx::query("DELETE FROM ocpi_publications WHERE site_id = $1 AND provider_id = $2")
                .bind(site_id)
                .bind(provider)
                .execute(&mut *tx)
                .await?;
        }
        for provider in published.iter().filter(|p| !before.contains(p)) {
            sqlx::query(
                "INSERT INTO ocpi_publications (site_id, provider_id, created_at)
                 VALUES ($1, $2, $3)",
            )
            .bind(site_id)
            .bind(provider)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Republication {
            published,
            unpublished,
        })
    }

    /// The providers the site is published to (ids, oldest first): those of its owner team.
    pub async fn ocpi_site_publications(&self, site_id: i64) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT x.provider_id FROM ocpi_publications x
             JOIN sites s ON s.id = x.site_id
             JOIN providers p ON p.id = x.provider_id AND p.team_id = s.team_id
             WHERE x.site_id = $1 ORDER BY x.provider_id",
        )
        .bind(site_id)
        .fetch_all(self.db())
        .await?)
    }
}
