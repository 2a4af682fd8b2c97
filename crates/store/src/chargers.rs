//! Chargers: registration, the gateway's credential look-up, and the API's reads.

use crate::access::{CHARGER_GRANTS, Permissions};
use crate::{Result, Store, StoreError, accounts::operators_team, flag, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;

/// A charger to register.
#[derive(Debug, Clone, Default)]
pub struct NewCharger {
    pub identity: String,
    pub reference: Option<String>,
    /// Already hashed (see `cms_credentials::hash_secret`); `None` for no Basic auth.
    pub password_hash: Option<String>,
    /// The site to put it in; `None` for the operators' default site.
    pub site_uuid: Option<String>,
}

/// The latest reading of a connector as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredMeterValue {
    pub identity: String,
    pub connector_id: i64,
    /// The REST `meterValue` array.
    pub meter_value: String,
    pub measured_at: String,
}

/// A charger as the API lists it, with the caller's permissions on it.
#[derive(Debug, Clone)]
pub struct ChargerRow {
    pub id: i64,
    pub uuid: String,
    pub site_id: i64,
    pub identity: String,
    pub reference: Option<String>,
    pub connection_status: String,
    pub status: Option<String>,
    pub error: Option<String>,
    pub error_info: Option<String>,
    pub vendor_id: Option<String>,
    pub vendor_error_code: Option<String>,
    pub firmware_version: Option<String>,
    pub server: Option<String>,
    pub last_connection_at: Option<String>,
    pub last_disconnection_at: Option<String>,
    pub last_heartbeat_at: Option<String>,
    pub setup_pending: bool,
    pub setup_completed: bool,
    pub blocked: bool,
    pub max_current: Option<f64>,
    pub license_smart: bool,
    pub license_pro: bool,
    pub created_at: String,
    pub updated_at: String,
    pub permissions: Permissions,
}

impl<'r> sqlx::FromRow<'r, AnyRow> for ChargerRow {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        Ok(ChargerRow {
            id: row.try_get("id")?,
            uuid: row.try_get("uuid")?,
            site_id: row.try_get("site_id")?,
            identity: row.try_get("identity")?,
            reference: row.try_get("reference")?,
            connection_status: row.try_get("connection_status")?,
            status: row.try_get("status")?,
            error: row.try_get("error")?,
            error_info: row.try_get("error_info")?,
            vendor_id: row.try_get("vendor_id")?,
            vendor_error_code: row.try_get("vendor_error_code")?,
            firmware_version: row.try_get("firmware_version")?,
            server: row.try_get("server")?,
            last_connection_at: row.try_get("last_connection_at")?,
            last_disconnection_at: row.try_get("last_disconnection_at")?,
            last_heartbeat_at: row.try_get("last_heartbeat_at")?,
            setup_pending: flag(row, "setup_pending")?,
            setup_completed: flag(row, "setup_completed")?,
            blocked: flag(row, "blocked")?,
            max_current: row.try_get("max_current")?,
            license_smart: flag(row, "license_smart")?,
            license_pro: flag(row, "license_pro")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            permissions: Permissions::from_grants(
                row.try_get("full_access")?,
                row.try_get("sensitive")?,
            ),
        })
    }
}

/// The columns of [`ChargerRow`], from `chargers c` joined to [`CHARGER_GRANTS`] as `g`.
pub const CHARGER_COLUMNS: &str =
    "c.id, c.uuid, c.site_id, c.identity, c.reference, c.connection_status, c.status, c.error,
    c.error_info, c.vendor_id, c.vendor_error_code, c.firmware_version, c.server,
    c.last_connection_at, c.last_disconnection_at, c.last_heartbeat_at, c.setup_pending,
    c.setup_completed, c.blocked, c.max_current, c.license_smart, c.license_pro,
    c.created_at, c.updated_at, g.full_access, g.sensitive";

impl Store {
    /// Registers a charger and returns its uuid.
    pub async fn add_charger(&self, new: &NewCharger) -> Result<String> {
        let mut uuids = self.add_chargers(std::slice::from_ref(new)).await?;
        Ok(uuids.remove(0))
    }

    /// Registers chargers in one transaction (all or none) and returns their uuids in order.
    pub async fn add_chargers(&self, chargers: &[NewCharger]) -> Result<Vec<String>> {
        let mut tx = self.pool.begin().await?;
        let mut uuids = Vec::with_capacity(chargers.len());
        for new in chargers {
            uuids.push(insert_charger(&mut tx, new).await?);
        }
        tx.commit().await?;
        Ok(uuids)
    }

    /// The gateway's question at handshake: is this charger registered, and with which password
    /// hash? `None` for unknown; `Some(None)` for registered without a password.
    pub async fn charger_password(&self, identity: &str) -> Result<Option<Option<String>>> {
        let row = sqlx::query("SELECT password_hash FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.get("password_hash")))
    }

    /// One page of the chargers a user may see (in `site_id` only, when given), and how many
    /// there are in all.
    pub async fn chargers_visible_to(
        &self,
        user_id: i64,
        site_id: Option<i64>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<ChargerRow>, i64)> {
        let now = now_record_time();
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM chargers c JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id
             WHERE ($3 IS NULL OR c.site_id = $3)"
        ))
        .bind(user_id)
        .bind(&now)
        .bind(site_id)
        .fetch_one(&self.pool)
        .await?;
        let rows = sqlx::query_as(&format!(
            "SELECT {CHARGER_COLUMNS} FROM chargers c
             JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id
             WHERE ($3 IS NULL OR c.site_id = $3) ORDER BY c.id LIMIT $4 OFFSET $5"
        ))
        .bind(user_id)
        .bind(&now)
        .bind(site_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        Ok((rows, total))
    }

    /// A charger by uuid, if the user may see it.
    pub async fn charger_visible_to(&self, user_id: i64, uuid: &str) -> Result<Option<ChargerRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {CHARGER_COLUMNS} FROM chargers c
             JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id WHERE c.uuid = $3"
        ))
        .bind(user_id)
        .bind(now_record_time())
        .bind(uuid)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Whether the charger has reported this connector (status or meter values).
    pub async fn connector_known(&self, charger_id: i64, connector_id: i64) -> Result<bool> {
        let known: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM connectors WHERE charger_id = $1 AND connector_id = $2
             UNION SELECT 1 FROM latest_meter_values WHERE charger_id = $3 AND connector_id = $4",
        )
        .bind(charger_id)
        .bind(connector_id)
        .bind(charger_id)
        .bind(connector_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(known.is_some())
    }

    /// Every stored latest meter value, to warm the cache at start.
    pub async fn latest_meter_values(&self) -> Result<Vec<StoredMeterValue>> {
        Ok(sqlx::query_as(
            "SELECT c.identity, m.connector_id, m.meter_value, m.measured_at
             FROM latest_meter_values m JOIN chargers c ON c.id = m.charger_id",
        )
        .fetch_all(&self.pool)
        .await?)
    }
}

/// Inserts one charger.
async fn insert_charger(db: &mut sqlx::AnyConnection, new: &NewCharger) -> Result<String> {
    let site_id = match &new.site_uuid {
        Some(uuid) => sqlx::query_scalar("SELECT id FROM sites WHERE uuid = $1")
            .bind(uuid)
            .fetch_optional(&mut *db)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no site with uuid {uuid}")))?,
        None => default_site(db).await?,
    };
    let uuid = uuid::Uuid::new_v4().to_string();
    let now = now_record_time();
    let inserted = sqlx::query(
        "INSERT INTO chargers (uuid, site_id, identity, reference, password_hash, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&uuid)
    .bind(site_id)
    .bind(&new.identity)
    .bind(&new.reference)
    .bind(&new.password_hash)
    .bind(&now)
    .bind(&now)
    .execute(&mut *db)
    .await;
    match inserted {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            return Err(StoreError::Conflict(format!(
                "a charger with identity {:?} already exists",
                new.identity
            )));
        }
        other => other?,
    };
    Ok(uuid)
}

/// The operators' default site, created on first use.
async fn default_site(tx: &mut sqlx::AnyConnection) -> Result<i64> {
    let team = operators_team(tx).await?;
    let existing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM sites WHERE team_id = $1 ORDER BY id LIMIT 1")
            .bind(team)
            .fetch_optional(&mut *tx)
            .await?;
    if let Some(id) = existing {
        return Ok(id);
    }
    let now = now_record_time();
    Ok(sqlx::query_scalar(
        "INSERT INTO sites (uuid, team_id, name, street, postal_code, house_number, city, country, created_at, updated_at)
         VALUES ($1, $2, 'Default site', '', '', 0, '', '', $3, $4) RETURNING id",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(team)
    .bind(&now)
    .bind(&now)
    .fetch_one(&mut *tx)
    .await?)
}
