//! Chargers: registration, the gateway's credential look-up, the API's reads, and the
//! settings operators give connectors.

use crate::access::{CHARGER_GRANTS, Permissions};
use crate::webhooks::outbox;
use crate::{Quota, Result, Store, StoreError, accounts::operators_team, flag, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;

/// A charger to register.
#[derive(Debug, Clone, Default)]
pub struct NewCharger {
    pub identity: String,
    pub reference: Option<String>,
    /// Already hashed (see `cms_credentials::hash_secret`); `None` for no Basic auth.
    pub password_hash: Option<String>,
    /// OCPP security profile, 0 to 3 (see `cms_credentials::charger_credentials`).
    pub security_profile: i64,
    /// The site to put it in; `None` for the operators' default site.
    pub site_uuid: Option<String>,
}

/// A connector as the API shows it: what the charger reported (status, error) and what the
/// operator set (phase rotation, maximum current).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ConnectorRow {
    pub id: i64,
    pub charger_id: i64,
    /// The connector's number on its charger.
    pub connector_id: i64,
    pub status: String,
    pub error: String,
    pub error_info: Option<String>,
    pub vendor_id: Option<String>,
    pub vendor_error_code: Option<String>,
    pub max_amperage: Option<i64>,
    pub max_voltage: Option<i64>,
    pub standard: Option<String>,
    pub format: Option<String>,
    pub power_type: Option<String>,
    pub phase_rotation: Option<String>,
    /// A 2.0.1 station's EVSE (= `connector_id`); `None` for a 1.6 charger's connector.
    pub evse_id: Option<i64>,
    /// The connector within the EVSE that its newest StatusNotification named (2.0.1).
    pub evse_connector_id: Option<i64>,
    /// The 2.0.1 `connectorStatus` that `status` was mapped from.
    pub ocpp_status: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

pub(crate) const CONNECTOR_COLUMNS: &str =
    "id, charger_id, connector_id, status, error, error_info,
    vendor_id, vendor_error_code, max_amperage, max_voltage, standard, format, power_type,
    phase_rotation, evse_id, evse_connector_id, ocpp_status, created_at, updated_at";

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
    /// `1.6` or `2.0.1`: the version of its last connection; `None` until it first connected.
    pub ocpp_version: Option<String>,
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
    /// OCPP security profile, 0 to 3.
    pub security_profile: i64,
    /// The session it is connected with now (as the connection events told), when online.
    pub live_session: Option<String>,
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
            ocpp_version: row.try_get("ocpp_version")?,
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
            security_profile: row.try_get("security_profile")?,
            live_session: {
                let status: String = row.try_get("connection_status")?;
                let session: Option<String> = row.try_get("session")?;
                session.filter(|_| status == "online")
            },
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            permissions: Permissions::from_grants(
                row.try_get("full_access")?,
                row.try_get("sensitive")?,
            ),
        })
    }
}

/// The features a charger is licensed for (docs/api.md "Licences").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Licenses {
    /// Site load management (smart charging).
    pub smart: bool,
    /// Proxy relaying and prices shown on the charger.
    pub pro: bool,
}

/// The columns of [`ChargerRow`], from `chargers c` joined to [`CHARGER_GRANTS`] as `g`.
macro_rules! charger_row {
    () => {
        "c.id, c.uuid, c.site_id, c.identity, c.reference, c.connection_status, c.status, c.error,
    c.error_info, c.vendor_id, c.vendor_error_code, c.firmware_version, c.ocpp_version, c.server,
    c.last_connection_at, c.last_disconnection_at, c.last_heartbeat_at, c.setup_pending,
    c.setup_completed, c.blocked, c.max_current, c.license_smart, c.license_pro, c.security_profile, c.session,
    c.created_at, c.updated_at"
    };
}

pub const CHARGER_COLUMNS: &str = concat!(charger_row!(), ", g.full_access, g.sensitive");

/// [`CHARGER_COLUMNS`] of a read whose permissions are decided elsewhere (no grant joined).
pub const CHARGER_COLUMNS_WITHOUT_GRANTS: &str = concat!(
    charger_row!(),
    ", CAST(0 AS BIGINT) AS full_access, CAST(0 AS BIGINT) AS sensitive"
);

impl Store {
    /// Registers a charger and returns its uuid.
    pub async fn add_charger(&self, new: &NewCharger) -> Result<String> {
        let mut uuids = self.add_chargers(std::slice::from_ref(new)).await?;
        Ok(uuids.remove(0))
    }

    /// Registers chargers in one transaction (all or none) and returns their uuids in order.
    /// Past a team's charger quota, none is registered ([`StoreError::QuotaReached`]).
    pub async fn add_chargers(&self, chargers: &[NewCharger]) -> Result<Vec<String>> {
        let mut tx = self.begin_write().await?;
        let mut uuids = Vec::with_capacity(chargers.len());
        let mut teams = std::collections::BTreeSet::new();
        for new in chargers {
            let (uuid, team) = insert_charger(&mut tx, new).await?;
            let registered = "charger.registered";
            outbox::charger_changed(&mut tx, &new.identity, registered).await?;
            uuids.push(uuid);
            teams.insert(team);
        }
        // In id order, so that two imports into the same teams never wait for each other.
        for team in teams {
            self.enforce_quota(&mut tx, Quota::Chargers, team).await?;
        }
        tx.commit().await?;
        Ok(uuids)
    }

    /// Moves the charger `identity` to the site `site_uuid` with new credentials, and stops
    /// relaying it to the proxy servers its former holder set: the platform operators' answer
    /// to a claim (docs/api.md "Claiming a charger"). Returns its uuid; past the new team's
    /// charger quota nothing changes.
    pub async fn move_charger(
        &self,
        identity: &str,
        site_uuid: &str,
        security_profile: i64,
        password_hash: Option<&str>,
    ) -> Result<String> {
        let mut tx = self.begin_write().await?;
        // Gone from its former team's fleet, new in its new team's.
        outbox::charger_changed(&mut tx, identity, "charger.removed").await?;
        let site: Option<(i64, i64)> =
            sqlx::query_as("SELECT id, team_id FROM sites WHERE uuid = $1")
                .bind(site_uuid)
                .fetch_optional(&mut *tx)
                .await?;
        let (site_id, team) =
            site.ok_or_else(|| StoreError::NotFound(format!("no site with uuid {site_uuid}")))?;
        let moved: Option<(i64, String)> = sqlx::query_as(
            "UPDATE chargers SET site_id = $1, security_profile = $2, password_hash = $3,
               updated_at = $4
             WHERE identity = $5 RETURNING id, uuid",
        )
        .bind(site_id)
        .bind(security_profile)
        .bind(password_hash)
        .bind(now_record_time())
        .bind(identity)
        .fetch_optional(&mut *tx)
        .await?;
        let (charger_id, uuid) =
            moved.ok_or_else(|| StoreError::NotFound(format!("no charger {identity}")))?;
        sqlx::query("DELETE FROM proxy_servers WHERE charger_id = $1")
            .bind(charger_id)
            .execute(&mut *tx)
            .await?;
        outbox::charger_changed(&mut tx, identity, "charger.registered").await?;
        self.enforce_quota(&mut tx, Quota::Chargers, team).await?;
        tx.commit().await?;
        Ok(uuid)
    }

    /// Whether `identity` is registered (`None`: it is not) in a site of one of `user_id`'s
    /// teams (`Some(true)`) or of someone else's (`Some(false)`).
    pub async fn charger_holder_is(&self, identity: &str, user_id: i64) -> Result<Option<bool>> {
        let members: Option<i64> = sqlx::query_scalar(
            "SELECT COUNT(tu.user_id) FROM chargers c JOIN sites s ON s.id = c.site_id
             LEFT JOIN team_user tu ON tu.team_id = s.team_id AND tu.user_id = $2
             WHERE c.identity = $1 GROUP BY c.id",
        )
        .bind(identity)
        .bind(user_id)
        .fetch_optional(self.db())
        .await?;
        Ok(members.map(|n| n > 0))
    }

    /// Changes how a charger proves who it is. The registry's change log (a trigger) carries
    /// it to the gateways, which apply it from the charger's next connection.
    pub async fn set_charger_security(
        &self,
        charger_id: i64,
        security_profile: i64,
        password_hash: Option<&str>,
    ) -> Result<()> {
        let done = sqlx::query(
            "UPDATE chargers SET security_profile = $1, password_hash = $2, updated_at = $3
             WHERE id = $4",
        )
        .bind(security_profile)
        .bind(password_hash)
        .bind(now_record_time())
        .bind(charger_id)
        .execute(self.db())
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound("charger".into()));
        }
        Ok(())
    }

    /// Keeps a credential change (a password hash and security profile) that becomes the
    /// charger's only once the charger accepts it from action `action_uuid` (its
    /// ChangeConfiguration of AuthorizationKey, taken right after): see
    /// `ActionReported::credential`.
    pub async fn insert_credential_change(
        &self,
        action_uuid: &str,
        charger_id: i64,
        security_profile: i64,
        password_hash: &str,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO charger_credential_changes
               (action_uuid, charger_id, password_hash, security_profile, created_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(action_uuid)
        .bind(charger_id)
        .bind(password_hash)
        .bind(security_profile)
        .bind(now_record_time())
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Grants or withdraws a charger's licences (`None` leaves one as it is); the licences
    /// it holds then, `None` for an unknown charger. Withdrawing `pro` stops its relaying
    /// (the registry's change log carries it to the gateways).
    pub async fn set_charger_licenses(
        &self,
        charger_id: i64,
        smart: Option<bool>,
        pro: Option<bool>,
    ) -> Result<Option<Licenses>> {
        let mut tx = self.begin_write().await?;
        let now = now_record_time();
        for (column, value) in [("license_smart", smart), ("license_pro", pro)] {
            let Some(value) = value else { continue };
            // Only when it changes: writing `license_pro` logs a registry change.
            sqlx::query(&format!(
                "UPDATE chargers SET {column} = $1, updated_at = $2 WHERE id = $3 AND {column} <> $1"
            ))
            .bind(i64::from(value))
            .bind(&now)
            .bind(charger_id)
            .execute(&mut *tx)
            .await?;
        }
        let held: Option<(i64, i64)> =
            sqlx::query_as("SELECT license_smart, license_pro FROM chargers WHERE id = $1")
                .bind(charger_id)
                .fetch_optional(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(held.map(|(smart, pro)| Licenses {
            smart: smart != 0,
            pro: pro != 0,
        }))
    }

    /// The gateway's question at handshake: is this charger registered, and with which password
    /// hash? `None` for unknown; `Some(None)` for registered without a password.
    pub async fn charger_password(&self, identity: &str) -> Result<Option<Option<String>>> {
        let row = sqlx::query("SELECT password_hash FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(self.db())
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
        .fetch_one(self.db())
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
        .fetch_all(self.db())
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
        .fetch_optional(self.db())
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
        .fetch_optional(self.db())
        .await?;
        Ok(known.is_some())
    }

    /// The connectors of a charger, by number.
    pub async fn connectors(&self, charger_id: i64) -> Result<Vec<ConnectorRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {CONNECTOR_COLUMNS} FROM connectors WHERE charger_id = $1 ORDER BY connector_id"
        ))
        .bind(charger_id)
        .fetch_all(self.db())
        .await?)
    }

    /// Sets a connector's phase rotation and maximum current, creating the connector (status
    /// `Unavailable`, error `NoError`) when the charger has not reported it yet, so that it can
    /// be set up before installation. What the charger reports later changes only its status
    /// columns, never these settings.
    pub async fn configure_connector(
        &self,
        charger_id: i64,
        connector_id: i64,
        phase_rotation: &str,
        max_amperage: i64,
    ) -> Result<ConnectorRow> {
        let now = now_record_time();
        Ok(sqlx::query_as(&format!(
            "INSERT INTO connectors (charger_id, connector_id, phase_rotation, max_amperage,
               created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (charger_id, connector_id) DO UPDATE SET
               phase_rotation = excluded.phase_rotation, max_amperage = excluded.max_amperage,
               updated_at = excluded.updated_at
             RETURNING {CONNECTOR_COLUMNS}"
        ))
        .bind(charger_id)
        .bind(connector_id)
        .bind(phase_rotation)
        .bind(max_amperage)
        .bind(&now)
        .bind(&now)
        .fetch_one(self.db())
        .await?)
    }

    /// Every stored latest meter value, to warm the cache at start.
    pub async fn latest_meter_values(&self) -> Result<Vec<StoredMeterValue>> {
        Ok(sqlx::query_as(
            "SELECT c.identity, m.connector_id, m.meter_value, m.measured_at
             FROM latest_meter_values m JOIN chargers c ON c.id = m.charger_id",
        )
        .fetch_all(self.db())
        .await?)
    }
}

/// Inserts one charger; returns its uuid and the team that owns its site.
async fn insert_charger(db: &mut sqlx::AnyConnection, new: &NewCharger) -> Result<(String, i64)> {
    let (site_id, team): (i64, i64) = match &new.site_uuid {
        Some(uuid) => sqlx::query_as("SELECT id, team_id FROM sites WHERE uuid = $1")
            .bind(uuid)
            .fetch_optional(&mut *db)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no site with uuid {uuid}")))?,
        None => default_site(db).await?,
    };
    let uuid = uuid::Uuid::new_v4().to_string();
    let now = now_record_time();
    let inserted = sqlx::query(
        "INSERT INTO chargers (uuid, site_id, identity, reference, password_hash,
           security_profile, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&uuid)
    .bind(site_id)
    .bind(&new.identity)
    .bind(&new.reference)
    .bind(&new.password_hash)
    .bind(new.security_profile)
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
    Ok((uuid, team))
}

/// The operators' default site, created on first use, and the operators' team.
async fn default_site(tx: &mut sqlx::AnyConnection) -> Result<(i64, i64)> {
    let team = operators_team(tx).await?;
    let existing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM sites WHERE team_id = $1 ORDER BY id LIMIT 1")
            .bind(team)
            .fetch_optional(&mut *tx)
            .await?;
    if let Some(id) = existing {
        return Ok((id, team));
    }
    let now = now_record_time();
    let id = sqlx::query_scalar(
        "INSERT INTO sites (uuid, team_id, name, street, postal_code, house_number, city, country, created_at, updated_at)
         VALUES ($1, $2, 'Default site', '', '', 0, '', '', $3, $4) RETURNING id",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(team)
    .bind(&now)
    .bind(&now)
    .fetch_one(&mut *tx)
    .await?;
    Ok((id, team))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StateChange;
    use crate::test_support::{operator_charger, store_test};

    fn status(connector_id: i64, status: &str) -> StateChange {
        StateChange::Status {
            identity: "CP-1".into(),
            connector_id,
            status: status.into(),
            error: "NoError".into(),
            info: None,
            vendor_id: None,
            vendor_error_code: None,
            at: now_record_time(),
        }
    }

    store_test!(
        a_connector_is_configured_before_and_after_it_reports,
        |store| {
            let new = NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            };
            let charger = operator_charger(&store, new).await;
            assert!(store.connectors(charger.id).await.unwrap().is_empty());

            // Not reported yet: created unavailable, with the settings.
            let early = store
                .configure_connector(charger.id, 2, "RST", 32)
                .await
                .unwrap();
            assert_eq!((early.connector_id, early.charger_id), (2, charger.id));
            assert_eq!(
                (early.status.as_str(), early.error.as_str()),
                ("Unavailable", "NoError")
            );
            assert_eq!(
                (early.phase_rotation.as_deref(), early.max_amperage),
                (Some("RST"), Some(32))
            );

            // What the charger reports changes the status only.
            store
                .apply(&[status(2, "Available"), status(1, "Charging")])
                .await
                .unwrap();
            let connectors = store.connectors(charger.id).await.unwrap();
            let numbers: Vec<i64> = connectors.iter().map(|c| c.connector_id).collect();
            assert_eq!(numbers, [1, 2]);
            assert_eq!(connectors[1].status, "Available");
            assert_eq!(connectors[1].phase_rotation.as_deref(), Some("RST"));
            assert_eq!(connectors[1].max_amperage, Some(32));
            assert_eq!(connectors[1].created_at, early.created_at);

            // A reported connector keeps its status when configured.
            let later = store
                .configure_connector(charger.id, 1, "T", 16)
                .await
                .unwrap();
            assert_eq!(later.id, connectors[0].id);
            assert_eq!(later.status, "Charging");
            assert_eq!(
                (later.phase_rotation.as_deref(), later.max_amperage),
                (Some("T"), Some(16))
            );
        }
    );

    store_test!(a_registered_password_is_kept_hashed, |store| {
        let new = NewCharger {
            identity: "CP-1".into(),
            password_hash: Some(cms_credentials::hash_secret("sixteen-chars-ok")),
            ..Default::default()
        };
        let charger = operator_charger(&store, new).await;
        assert!(charger.permissions.full && charger.permissions.sensitive);
        let stored = store
            .charger_password("CP-1")
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(!stored.contains("sixteen"));
        assert_eq!(
            cms_credentials::verify_secret("sixteen-chars-ok", &stored),
            Ok(true)
        );
    });
}
