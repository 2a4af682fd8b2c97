//! Sites, the teams that reach them, and invites to them.
//!
//! A site belongs to one team, its owner (`sites.team_id`), which has full access. Other teams
//! (guests) reach it through a `site_access` row, made when one of their members accepts an
//! invite. The owner team never has a `site_access` row of its own: accepting and transferring
//! keep it that way, so a team is either the owner or a guest of a site, never both.

use crate::access::{CHARGER_GRANTS, Permissions, SITE_GRANTS};
use crate::chargers::CONNECTOR_COLUMNS;
use crate::teams::Team;
use crate::{ConnectorRow, Quota, Result, Store, StoreError, flag, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashMap;

mod invites;
mod team_access;
#[cfg(test)]
mod tests;

pub use invites::{Acceptance, INVITE_LIFETIME_DAYS, Invite, NewInvite};
pub use team_access::{AssetAccess, GUEST_ROLE, OWNER_ROLE, TeamAccess};

/// A site as the API shows it to one user, with that user's permissions on it.
#[derive(Debug, Clone)]
pub struct Site {
    pub id: i64,
    pub uuid: String,
    pub team_id: i64,
    pub name: String,
    pub address: Option<String>,
    pub street: String,
    pub postal_code: String,
    pub house_number: i64,
    pub house_number_addition: Option<String>,
    pub city: String,
    pub country: String,
    pub smart_charging: String,
    /// Who may charge: [`AUTHORIZATION_OPEN`] or [`AUTHORIZATION_ID_TAGS`].
    pub authorization_mode: String,
    /// Whether cms keeps the chargers' local authorization lists equal to the site's tags.
    pub local_authorization_list: bool,
    /// The tariff that prices the site's transactions (one of the owner team's), if any.
    pub tariff_uuid: Option<String>,
    /// An IANA time zone name: the tariff's time-of-day restrictions follow it.
    pub time_zone: String,
    /// Whether prices and costs are shown on the site's chargers (those that can).
    pub show_prices: bool,
    /// The site's chargers this user sees (a guest limited to some assets sees fewer).
    pub chargers_count: i64,
    pub created_at: String,
    pub updated_at: String,
    pub permissions: Permissions,
}

impl<'r> sqlx::FromRow<'r, AnyRow> for Site {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Site {
            id: row.try_get("id")?,
            uuid: row.try_get("uuid")?,
            team_id: row.try_get("team_id")?,
            name: row.try_get("name")?,
            address: row.try_get("address")?,
            street: row.try_get("street")?,
            postal_code: row.try_get("postal_code")?,
            house_number: row.try_get("house_number")?,
            house_number_addition: row.try_get("house_number_addition")?,
            city: row.try_get("city")?,
            country: row.try_get("country")?,
            smart_charging: row.try_get("smart_charging")?,
            authorization_mode: row.try_get("authorization_mode")?,
            local_authorization_list: flag(row, "local_authorization_list")?,
            tariff_uuid: row.try_get("tariff_uuid")?,
            time_zone: row.try_get("time_zone")?,
            show_prices: flag(row, "show_prices")?,
            chargers_count: row.try_get("chargers_count")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            permissions: Permissions::from_grants(
                row.try_get("full_access")?,
                row.try_get("sensitive")?,
            ),
        })
    }
}

/// The columns of [`Site`], from `sites s` joined to [`SITE_GRANTS`] as `g` (`$1` user, `$2` now).
fn site_query(filter: &str) -> String {
    format!(
        "SELECT s.id, s.uuid, s.team_id, s.name, s.address, s.street, s.postal_code,
            s.house_number, s.house_number_addition, s.city, s.country, s.smart_charging,
            s.authorization_mode, s.local_authorization_list, s.created_at, s.updated_at, g.full_access, g.sensitive,
            s.time_zone, s.show_prices,
            (SELECT t.uuid FROM tariffs t WHERE t.id = s.tariff_id) AS tariff_uuid,
            (SELECT COUNT(*) FROM chargers c JOIN ({CHARGER_GRANTS}) cg ON cg.charger_id = c.id
             WHERE c.site_id = s.id) AS chargers_count
         FROM sites s JOIN ({SITE_GRANTS}) g ON g.site_id = s.id {filter}"
    )
}

/// Where a site is: every field of the reference's site update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteAddress {
    pub name: String,
    pub street: String,
    pub house_number: i64,
    pub house_number_addition: Option<String>,
    pub postal_code: String,
    pub city: String,
    pub country: String,
}

impl SiteAddress {
    /// The one-line address (`Stationsplein 12A, 1012 AB Amsterdam`) kept in `sites.address`.
    fn one_line(&self) -> String {
        let addition = self.house_number_addition.as_deref().unwrap_or("");
        format!(
            "{} {}{addition}, {} {}",
            self.street, self.house_number, self.postal_code, self.city
        )
    }
}

/// Every tag is accepted (the default).
pub const AUTHORIZATION_OPEN: &str = "open";
/// Only the id tags of the site's owner team and of the teams with access to it are accepted.
pub const AUTHORIZATION_ID_TAGS: &str = "id_tags";
/// A site's authorization modes.
pub const AUTHORIZATION_MODES: [&str; 2] = [AUTHORIZATION_OPEN, AUTHORIZATION_ID_TAGS];

/// Who may charge at a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteAuthorization {
    /// One of [`AUTHORIZATION_MODES`].
    pub mode: String,
    pub local_authorization_list: bool,
}

impl Default for SiteAuthorization {
    fn default() -> Self {
        SiteAuthorization {
            mode: AUTHORIZATION_OPEN.into(),
            local_authorization_list: false,
        }
    }
}

/// A partial update of a site: `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SiteChanges {
    pub name: Option<String>,
    pub street: Option<String>,
    pub house_number: Option<i64>,
    /// `Some(None)` clears it.
    pub house_number_addition: Option<Option<String>>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    /// One of [`AUTHORIZATION_MODES`].
    pub authorization_mode: Option<String>,
    pub local_authorization_list: Option<bool>,
    /// The tariff's row id; `Some(None)` takes the site's tariff away.
    pub tariff_id: Option<Option<i64>>,
    /// An IANA time zone name.
    pub time_zone: Option<String>,
    pub show_prices: Option<bool>,
}

impl SiteChanges {
    /// The address these changes describe in full, if they name every required field.
    pub fn complete(self) -> Option<SiteAddress> {
        Some(SiteAddress {
            name: self.name?,
            street: self.street?,
            house_number: self.house_number?,
            house_number_addition: self.house_number_addition.flatten(),
            postal_code: self.postal_code?,
            city: self.city?,
            country: self.country?,
        })
    }

    /// The authorization these changes give, over `to`.
    pub fn authorization(&self, mut to: SiteAuthorization) -> SiteAuthorization {
        if let Some(mode) = &self.authorization_mode {
            to.mode = mode.clone();
        }
        if let Some(list) = self.local_authorization_list {
            to.local_authorization_list = list;
        }
        to
    }

    fn apply(self, mut to: SiteAddress) -> SiteAddress {
        to.name = self.name.unwrap_or(to.name);
        to.street = self.street.unwrap_or(to.street);
        to.house_number = self.house_number.unwrap_or(to.house_number);
        to.house_number_addition = self
            .house_number_addition
            .unwrap_or(to.house_number_addition);
        to.postal_code = self.postal_code.unwrap_or(to.postal_code);
        to.city = self.city.unwrap_or(to.city);
        to.country = self.country.unwrap_or(to.country);
        to
    }
}

impl Store {
    /// One page of the sites a user reaches, and how many there are in all.
    pub async fn sites_visible_to(
        &self,
        user_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Site>, i64)> {
        let now = now_record_time();
        let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM ({SITE_GRANTS}) g"))
            .bind(user_id)
            .bind(&now)
            .fetch_one(self.db())
            .await?;
        let sites = sqlx::query_as(&site_query("ORDER BY s.id LIMIT $3 OFFSET $4"))
            .bind(user_id)
            .bind(&now)
            .bind(limit)
            .bind(offset)
            .fetch_all(self.db())
            .await?;
        Ok((sites, total))
    }

    /// A site by uuid, if the user reaches it.
    pub async fn site_visible_to(&self, user_id: i64, uuid: &str) -> Result<Option<Site>> {
        Ok(sqlx::query_as(&site_query("WHERE s.uuid = $3"))
            .bind(user_id)
            .bind(now_record_time())
            .bind(uuid)
            .fetch_optional(self.db())
            .await?)
    }

    /// The team a user acts for: `team_uuid` if the user belongs to it, or (without one) the
    /// user's personal team. `None` for a team the user does not belong to.
    pub async fn acting_team(&self, user_id: i64, team_uuid: Option<&str>) -> Result<Option<Team>> {
        Ok(sqlx::query_as(
            "SELECT t.id, t.uuid, t.name, t.type, t.email, t.is_personal_team, t.created_at,
                t.updated_at
             FROM teams t JOIN team_user tu ON tu.team_id = t.id
             WHERE tu.user_id = $1 AND (t.uuid = $2
                OR ($2 IS NULL AND t.is_personal_team = 1 AND t.owner_user_id = $1))
             ORDER BY t.id LIMIT 1",
        )
        .bind(user_id)
        .bind(team_uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// Creates an open site owned by `team_id`; returns its uuid.
    pub async fn create_site(&self, team_id: i64, address: &SiteAddress) -> Result<String> {
        self.create_site_with(team_id, address, &SiteAuthorization::default())
            .await
    }

    /// Creates a site owned by `team_id` with its authorization; returns its uuid.
    pub async fn create_site_with(
        &self,
        team_id: i64,
        address: &SiteAddress,
        authorization: &SiteAuthorization,
    ) -> Result<String> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO sites (uuid, team_id, name, address, street, postal_code, house_number,
                house_number_addition, city, country, authorization_mode, local_authorization_list,
                created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
        )
        .bind(&uuid)
        .bind(team_id)
        .bind(&address.name)
        .bind(address.one_line())
        .bind(&address.street)
        .bind(&address.postal_code)
        .bind(address.house_number)
        .bind(&address.house_number_addition)
        .bind(&address.city)
        .bind(&address.country)
        .bind(&authorization.mode)
        .bind(i64::from(authorization.local_authorization_list))
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        self.enforce_quota(&mut tx, Quota::Sites, team_id).await?;
        tx.commit().await?;
        Ok(uuid)
    }

    /// Applies `changes` to a site (and its one-line address). The authorization mode is
    /// written only when it changes: writing it logs a registry change for each of the site's
    /// chargers.
    pub async fn update_site(&self, site_id: i64, changes: SiteChanges) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(
            "SELECT name, street, house_number, house_number_addition, postal_code, city, country,
                authorization_mode, local_authorization_list
             FROM sites WHERE id = $1",
        )
        .bind(site_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("no site with id {site_id}")))?;
        let current = SiteAddress {
            name: row.try_get("name")?,
            street: row.try_get("street")?,
            house_number: row.try_get("house_number")?,
            house_number_addition: row.try_get("house_number_addition")?,
            postal_code: row.try_get("postal_code")?,
            city: row.try_get("city")?,
            country: row.try_get("country")?,
        };
        let authorization = SiteAuthorization {
            mode: row.try_get("authorization_mode")?,
            local_authorization_list: flag(&row, "local_authorization_list")?,
        };
        let new_authorization = changes.authorization(authorization.clone());
        // Each column on its own: setting `authorization_mode` at all (even to its value) logs
        // a registry change for every charger of the site.
        if new_authorization.mode != authorization.mode {
            sqlx::query("UPDATE sites SET authorization_mode = $2, updated_at = $3 WHERE id = $1")
                .bind(site_id)
                .bind(&new_authorization.mode)
                .bind(now_record_time())
                .execute(&mut *tx)
                .await?;
        }
        if new_authorization.local_authorization_list != authorization.local_authorization_list {
            sqlx::query(
                "UPDATE sites SET local_authorization_list = $2, updated_at = $3 WHERE id = $1",
            )
            .bind(site_id)
            .bind(i64::from(new_authorization.local_authorization_list))
            .bind(now_record_time())
            .execute(&mut *tx)
            .await?;
        }
        if let Some(tariff_id) = changes.tariff_id {
            sqlx::query("UPDATE sites SET tariff_id = $2, updated_at = $3 WHERE id = $1")
                .bind(site_id)
                .bind(tariff_id)
                .bind(now_record_time())
                .execute(&mut *tx)
                .await?;
        }
        if let Some(show) = changes.show_prices {
            sqlx::query("UPDATE sites SET show_prices = $2, updated_at = $3 WHERE id = $1")
                .bind(site_id)
                .bind(i64::from(show))
                .bind(now_record_time())
                .execute(&mut *tx)
                .await?;
        }
        if let Some(time_zone) = &changes.time_zone {
            sqlx::query("UPDATE sites SET time_zone = $2, updated_at = $3 WHERE id = $1")
                .bind(site_id)
                .bind(time_zone)
                .bind(now_record_time())
                .execute(&mut *tx)
                .await?;
        }
        let new = changes.apply(current.clone());
        if new != current {
            sqlx::query(
                "UPDATE sites SET name = $2, address = $3, street = $4, house_number = $5,
                    house_number_addition = $6, postal_code = $7, city = $8, country = $9,
                    updated_at = $10
                 WHERE id = $1",
            )
            .bind(site_id)
            .bind(&new.name)
            .bind(new.one_line())
            .bind(&new.street)
            .bind(new.house_number)
            .bind(&new.house_number_addition)
            .bind(&new.postal_code)
            .bind(&new.city)
            .bind(&new.country)
            .bind(now_record_time())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes a site with its access and invites. A site that still has chargers is kept:
    /// [`StoreError::Conflict`].
    pub async fn delete_site(&self, site_id: i64) -> Result<()> {
        let still_has_chargers = || StoreError::Conflict("The site still has chargers.".into());
        let chargers: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chargers WHERE site_id = $1")
            .bind(site_id)
            .fetch_one(self.db())
            .await?;
        if chargers > 0 {
            return Err(still_has_chargers());
        }
        // A charger added since the count makes the foreign key refuse the delete.
        match sqlx::query("DELETE FROM sites WHERE id = $1")
            .bind(site_id)
            .execute(self.db())
            .await
        {
            Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
                Err(still_has_chargers())
            }
            other => other.map(|_| ()).map_err(Into::into),
        }
    }

    /// A page of the connectors of a site that team `team_id` reaches (only its listed
    /// chargers' for a team limited to some assets), and how many there are. `None` unless the
    /// user belongs to the team and the team reaches the site.
    pub async fn site_connectors_of_team(
        &self,
        user_id: i64,
        team_id: i64,
        site_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<Option<(Vec<ConnectorRow>, i64)>> {
        let reach = sqlx::query(
            "SELECT s.team_id AS owner_team_id, a.id AS access_id, a.can_access_all_assets
             FROM sites s JOIN team_user tu ON tu.team_id = $2 AND tu.user_id = $1
             LEFT JOIN site_access a ON a.site_id = s.id AND a.team_id = $2
             WHERE s.id = $3",
        )
        .bind(user_id)
        .bind(team_id)
        .bind(site_id)
        .fetch_optional(self.db())
        .await?;
        let Some(reach) = reach else { return Ok(None) };
        let owner = reach.try_get::<i64, _>("owner_team_id")? == team_id;
        let access_id: Option<i64> = reach.try_get("access_id")?;
        let all_assets =
            owner || reach.try_get::<Option<i64>, _>("can_access_all_assets")? == Some(1);
        if !owner && access_id.is_none() {
            return Ok(None);
        }
        const REACHED: &str = "FROM connectors WHERE charger_id IN (
                SELECT c.id FROM chargers c
                WHERE c.site_id = $1 AND ($2 = 1 OR EXISTS (SELECT 1 FROM site_access_assets x
                    WHERE x.site_access_id = $3 AND x.charger_id = c.id)))";
        let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) {REACHED}"))
            .bind(site_id)
            .bind(i64::from(all_assets))
            .bind(access_id)
            .fetch_one(self.db())
            .await?;
        let connectors = sqlx::query_as(&format!(
            "SELECT {CONNECTOR_COLUMNS} {REACHED}
             ORDER BY charger_id, connector_id LIMIT $4 OFFSET $5"
        ))
        .bind(site_id)
        .bind(i64::from(all_assets))
        .bind(access_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok(Some((connectors, total)))
    }

    /// The ids of a site's chargers by uuid (to check the chargers an access lists).
    pub async fn site_charger_ids(&self, site_id: i64) -> Result<HashMap<String, i64>> {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT uuid, id FROM chargers WHERE site_id = $1")
                .bind(site_id)
                .fetch_all(self.db())
                .await?;
        Ok(rows.into_iter().collect())
    }
}
