//! The teams that reach a site: the owner, and guests with their sensitive-data and asset
//! access; transfers of ownership.

use crate::teams::Team;
use crate::{Result, Store, flag, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;

/// The role of the team that owns a site.
pub const OWNER_ROLE: &str = "owner";
/// The role of a team that reaches a site through site access.
pub const GUEST_ROLE: &str = "guest";
/// Which of a site's chargers a guest team reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetAccess {
    All,
    /// Only these chargers (ids, all of the site).
    Chargers(Vec<i64>),
}

/// A team's access to a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamAccess {
    pub team: Team,
    /// [`OWNER_ROLE`] or [`GUEST_ROLE`].
    pub role: String,
    /// Whether the team may see sensitive data now (granted and unexpired).
    pub sensitive_data: bool,
    pub sensitive_data_expires_at: Option<String>,
    pub sensitive_data_requested_at: Option<String>,
    pub can_access_all_assets: bool,
    /// Uuids of the chargers a team limited to some assets reaches.
    pub accessible_assets: Vec<String>,
}

impl TeamAccess {
    pub fn is_owner(&self) -> bool {
        self.role == OWNER_ROLE
    }
}

/// The owner team and every guest team of a site (`$1`), one row each, filtered by team uuid
/// (`$2`, optional) and to the owner plus the teams of a user (`$3`, optional).
const TEAM_ACCESS: &str = "
    SELECT v.* FROM (
        SELECT t.id, t.uuid, t.name, t.type, t.email, t.is_personal_team, t.created_at,
            t.updated_at, 'owner' AS role, NULL AS access_id, 1 AS sensitive_data,
            NULL AS sensitive_data_expires_at, NULL AS sensitive_data_requested_at,
            1 AS can_access_all_assets
        FROM sites s JOIN teams t ON t.id = s.team_id WHERE s.id = $1
        UNION ALL
        SELECT t.id, t.uuid, t.name, t.type, t.email, t.is_personal_team, t.created_at,
            t.updated_at, 'guest', a.id, a.sensitive_data, a.sensitive_data_expires_at,
            a.sensitive_data_requested_at, a.can_access_all_assets
        FROM site_access a JOIN teams t ON t.id = a.team_id WHERE a.site_id = $1
    ) v
    WHERE ($2 IS NULL OR v.uuid = $2)
        AND ($3 IS NULL OR v.role = 'owner'
            OR v.id IN (SELECT tu.team_id FROM team_user tu WHERE tu.user_id = $3))
    ORDER BY CASE WHEN v.role = 'owner' THEN 0 ELSE 1 END, v.access_id";

impl Store {
    /// Every team with access to a site, the owner first. With `member` (a user id), only the
    /// owner and the teams that user belongs to: what a guest may know of the site's teams.
    pub async fn site_teams(&self, site_id: i64, member: Option<i64>) -> Result<Vec<TeamAccess>> {
        self.team_accesses(site_id, None, member).await
    }

    /// One team's access to a site; `None` if the team has none.
    pub async fn site_team(&self, site_id: i64, team_uuid: &str) -> Result<Option<TeamAccess>> {
        Ok(self
            .team_accesses(site_id, Some(team_uuid), None)
            .await?
            .pop())
    }

    async fn team_accesses(
        &self,
        site_id: i64,
        team_uuid: Option<&str>,
        member: Option<i64>,
    ) -> Result<Vec<TeamAccess>> {
        let rows = sqlx::query(TEAM_ACCESS)
            .bind(site_id)
            .bind(team_uuid)
            .bind(member)
            .fetch_all(self.db())
            .await?;
        let assets: Vec<(i64, String)> = sqlx::query_as(
            "SELECT x.site_access_id, c.uuid FROM site_access_assets x
             JOIN site_access a ON a.id = x.site_access_id JOIN chargers c ON c.id = x.charger_id
             WHERE a.site_id = $1 ORDER BY c.id",
        )
        .bind(site_id)
        .fetch_all(self.db())
        .await?;
        let now = now_record_time();
        rows.iter()
            .map(|row| {
                let access_id: Option<i64> = row.try_get("access_id")?;
                let expires_at: Option<String> = row.try_get("sensitive_data_expires_at")?;
                let can_access_all_assets = flag(row, "can_access_all_assets")?;
                let accessible_assets = match (can_access_all_assets, access_id) {
                    (false, Some(id)) => assets
                        .iter()
                        .filter(|(access, _)| *access == id)
                        .map(|(_, uuid)| uuid.clone())
                        .collect(),
                    _ => Vec::new(),
                };
                Ok(TeamAccess {
                    team: <Team as sqlx::FromRow<AnyRow>>::from_row(row)?,
                    role: row.try_get("role")?,
                    sensitive_data: flag(row, "sensitive_data")?
                        && expires_at.as_ref().is_none_or(|at| *at > now),
                    sensitive_data_expires_at: expires_at,
                    sensitive_data_requested_at: row.try_get("sensitive_data_requested_at")?,
                    can_access_all_assets,
                    accessible_assets,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// Ends a guest team's access. `false` if it had none.
    pub async fn remove_site_access(&self, site_id: i64, team_id: i64) -> Result<bool> {
        let done = sqlx::query("DELETE FROM site_access WHERE site_id = $1 AND team_id = $2")
            .bind(site_id)
            .bind(team_id)
            .execute(self.db())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Lets a guest team see sensitive data, until `expires_at` (record time) if given; this
    /// answers any pending request. `false` if the team has no access.
    pub async fn grant_sensitive_data(
        &self,
        site_id: i64,
        team_id: i64,
        expires_at: Option<&str>,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE site_access SET sensitive_data = 1, sensitive_data_expires_at = $3,
                sensitive_data_requested_at = NULL, updated_at = $4
             WHERE site_id = $1 AND team_id = $2",
        )
        .bind(site_id)
        .bind(team_id)
        .bind(expires_at)
        .bind(now_record_time())
        .execute(self.db())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Takes sensitive data from a guest team. `false` if the team has no access.
    pub async fn revoke_sensitive_data(&self, site_id: i64, team_id: i64) -> Result<bool> {
        self.update_access(
            site_id,
            team_id,
            "sensitive_data = 0, sensitive_data_expires_at = NULL",
        )
        .await
    }

    /// Records that a guest team asks for sensitive data. `false` if the team has no access.
    pub async fn request_sensitive_data(&self, site_id: i64, team_id: i64) -> Result<bool> {
        self.update_access(site_id, team_id, "sensitive_data_requested_at = $3")
            .await
    }

    /// `UPDATE site_access SET {set}` of one team's access, where `$3` is now.
    async fn update_access(&self, site_id: i64, team_id: i64, set: &str) -> Result<bool> {
        let done = sqlx::query(&format!(
            "UPDATE site_access SET {set}, updated_at = $3 WHERE site_id = $1 AND team_id = $2"
        ))
        .bind(site_id)
        .bind(team_id)
        .bind(now_record_time())
        .execute(self.db())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Sets which of the site's chargers a guest team reaches. `false` if it has no access.
    pub async fn set_site_assets(
        &self,
        site_id: i64,
        team_id: i64,
        assets: &AssetAccess,
    ) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let access_id: Option<i64> = sqlx::query_scalar(
            "UPDATE site_access SET can_access_all_assets = $3, updated_at = $4
             WHERE site_id = $1 AND team_id = $2 RETURNING id",
        )
        .bind(site_id)
        .bind(team_id)
        .bind(i64::from(*assets == AssetAccess::All))
        .bind(now_record_time())
        .fetch_optional(&mut *tx)
        .await?;
        let Some(access_id) = access_id else {
            return Ok(false);
        };
        replace_assets(&mut tx, access_id, assets).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Makes a guest team the site's owner; the old owner stays as a guest with sensitive data
    /// and every asset. `false` if the team has no access to the site.
    pub async fn transfer_site(&self, site_id: i64, team_id: i64) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        let guest: Option<i64> =
            sqlx::query_scalar("SELECT id FROM site_access WHERE site_id = $1 AND team_id = $2")
                .bind(site_id)
                .bind(team_id)
                .fetch_optional(&mut *tx)
                .await?;
        if guest.is_none() {
            return Ok(false);
        }
        transfer(&mut tx, site_id, team_id).await?;
        tx.commit().await?;
        Ok(true)
    }
}

/// Replaces the chargers listed for a site access.
pub(super) async fn replace_assets(
    tx: &mut sqlx::AnyConnection,
    access_id: i64,
    assets: &AssetAccess,
) -> Result<()> {
    sqlx::query("DELETE FROM site_access_assets WHERE site_access_id = $1")
        .bind(access_id)
        .execute(&mut *tx)
        .await?;
    if let AssetAccess::Chargers(ids) = assets {
        for charger_id in ids {
            sqlx::query(
                "INSERT INTO site_access_assets (site_access_id, charger_id) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
            )
            .bind(access_id)
            .bind(charger_id)
            .execute(&mut *tx)
            .await?;
        }
    }
    Ok(())
}

/// Makes `team_id` the owner of a site: its guest access (if any) goes, as the owner has full
/// access, and the old owner becomes a guest with sensitive data and every asset.
pub(super) async fn transfer(
    tx: &mut sqlx::AnyConnection,
    site_id: i64,
    team_id: i64,
) -> Result<()> {
    let now = now_record_time();
    let old_owner: i64 = sqlx::query_scalar("SELECT team_id FROM sites WHERE id = $1")
        .bind(site_id)
        .fetch_one(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM site_access WHERE site_id = $1 AND team_id = $2")
        .bind(site_id)
        .bind(team_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE sites SET team_id = $2, updated_at = $3 WHERE id = $1")
        .bind(site_id)
        .bind(team_id)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO site_access (site_id, team_id, sensitive_data, can_access_all_assets,
            created_at, updated_at)
         VALUES ($1, $2, 1, 1, $3, $3)
         ON CONFLICT (site_id, team_id) DO UPDATE SET sensitive_data = 1,
            sensitive_data_expires_at = NULL, can_access_all_assets = 1,
            updated_at = excluded.updated_at",
    )
    .bind(site_id)
    .bind(old_owner)
    .bind(&now)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
