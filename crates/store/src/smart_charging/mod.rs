//! Sites > Smart Charging: a site's settings (the REST API's), and what its balancer keeps
//! (`balancer`).
//!
//! The mode stays in `sites.smart_charging`, where the site resource has always shown it; the
//! other settings and the balancer's last computation are in `site_smart_charging`, one row
//! per site once its settings were first saved.

pub mod balancer;
mod mode;
pub mod station_reports;
#[cfg(test)]
mod tests;

use crate::access::CHARGER_GRANTS;
use crate::meters::CT_METER;
use crate::{Result, Store, now_record_time};
use balancer::SiteComputation;
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashSet;

pub use mode::SmartChargingMode;

/// The modes' words ([`SmartChargingMode`]), as the API takes them.
pub const MODE_DISABLED: &str = SmartChargingMode::Disabled.as_str();
pub const MODE_STATIC: &str = SmartChargingMode::Static.as_str();
pub const MODE_DYNAMIC: &str = SmartChargingMode::Dynamic.as_str();
pub const MODES: [&str; 3] = [MODE_DISABLED, MODE_STATIC, MODE_DYNAMIC];

/// Every charging connector gets the same share.
pub const STRATEGY_EQUAL: &str = "equal";
/// Higher-priority chargers are served first.
pub const STRATEGY_PRIORITY: &str = "priority";
pub const STRATEGIES: [&str; 2] = [STRATEGY_EQUAL, STRATEGY_PRIORITY];

/// A site's smart-charging settings. A site whose settings were never saved has the defaults
/// ([`SmartChargingSettings::defaults`]) with the mode its site row holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SmartChargingSettings {
    /// One of [`MODES`].
    pub mode: String,
    /// Per phase.
    pub grid_limit_amps: Option<f64>,
    /// The CT meter measuring the grid connection (`dynamic`).
    pub meter_id: Option<i64>,
    /// Its uuid, as the API names it (read only: writing takes `meter_id`).
    pub meter_uuid: Option<String>,
    /// One of [`STRATEGIES`].
    pub strategy: String,
    pub min_amps: f64,
    pub safety_margin_amps: f64,
    /// Per charger while the meter is quiet; 0 pauses them.
    pub fail_safe_amps: f64,
    pub meter_timeout_seconds: i64,
    /// `(charger uuid, priority)` of the site's chargers that have one, by uuid; the others
    /// have 0.
    pub priorities: Vec<(String, i64)>,
    /// When they were last saved; `None` before the first time.
    pub updated_at: Option<String>,
}

impl SmartChargingSettings {
    /// The settings of a site that never saved any, in `mode`.
    pub fn defaults(mode: &str) -> Self {
        SmartChargingSettings {
            mode: mode.to_string(),
            grid_limit_amps: None,
            meter_id: None,
            meter_uuid: None,
            strategy: STRATEGY_EQUAL.into(),
            // IEC 61851-1: a vehicle cannot be offered less than 6 A.
            min_amps: 6.0,
            safety_margin_amps: 0.0,
            fail_safe_amps: 6.0,
            meter_timeout_seconds: 60,
            priorities: Vec::new(),
            updated_at: None,
        }
    }
}

/// What a site's balancer last saw and decided, and the limits it sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SmartChargingStatus {
    pub mode: String,
    pub grid_limit_amps: Option<f64>,
    /// What the balancer last computed; `None` before its first round.
    pub computation: Option<SiteComputation>,
    /// By charger identity, then connector.
    pub limits: Vec<ConnectorLimit>,
}

impl SmartChargingStatus {
    /// `disabled`, `fail_safe` (the meter is quiet), `balancing` (limits are on connectors)
    /// or `idle`.
    pub fn state(&self) -> &'static str {
        if self.mode == MODE_DISABLED {
            "disabled"
        } else if self
            .computation
            .as_ref()
            .is_some_and(|c| c.fail_safe_since.is_some())
        {
            "fail_safe"
        } else if self.computation.is_some() && self.limits.iter().any(|l| l.connector_id > 0) {
            "balancing"
        } else {
            "idle"
        }
    }
}

/// The limit last sent to a connector of the site (connector 0: the charger's
/// TxDefaultProfile).
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorLimit {
    pub charger_uuid: String,
    pub identity: String,
    pub connector_id: i64,
    pub limit_amps: f64,
    pub purpose: String,
    pub transaction_id: Option<i64>,
    pub status: String,
    pub sent_at: String,
    pub answered_at: Option<String>,
    pub measured_amps: Option<f64>,
    pub paused_since: Option<String>,
}

impl Store {
    /// A site's settings: the defaults, in the site's mode, until they are first saved.
    pub async fn smart_charging_settings(&self, site_id: i64) -> Result<SmartChargingSettings> {
        let row = sqlx::query(
            "SELECT s.smart_charging, h.site_id, h.grid_limit_amps, h.meter_id,
               m.uuid AS meter_uuid, h.strategy, h.min_amps, h.safety_margin_amps,
               h.fail_safe_amps, h.meter_timeout_seconds, h.updated_at
             FROM sites s LEFT JOIN site_smart_charging h ON h.site_id = s.id
             LEFT JOIN meters m ON m.id = h.meter_id
             WHERE s.id = $1",
        )
        .bind(site_id)
        .fetch_optional(self.db())
        .await?
        .ok_or_else(|| crate::StoreError::NotFound(format!("no site with id {site_id}")))?;
        let mode: String = row.try_get("smart_charging")?;
        let mut settings = match row.try_get::<Option<i64>, _>("site_id")? {
            Some(_) => saved_settings(&row, mode)?,
            None => SmartChargingSettings::defaults(&mode),
        };
        settings.priorities = sqlx::query_as(
            "SELECT c.uuid, p.priority FROM smart_charging_priorities p
             JOIN chargers c ON c.id = p.charger_id
             WHERE c.site_id = $1 ORDER BY c.uuid",
        )
        .bind(site_id)
        .fetch_all(self.db())
        .await?;
        Ok(settings)
    }

    /// Saves a site's settings in one transaction: the mode on the site, the rest in its
    /// settings row (what the balancer wrote beside them stays), and `priorities` in place of
    /// those of the site's chargers (uuids of other sites' chargers are ignored).
    /// `meter_uuid` and `updated_at` are not read. Returns the settings as saved.
    pub async fn save_smart_charging_settings(
        &self,
        site_id: i64,
        settings: &SmartChargingSettings,
    ) -> Result<SmartChargingSettings> {
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        // Only a change touches the site: its `updated_at` tells when the site resource changed.
        sqlx::query(
            "UPDATE sites SET smart_charging = $2, updated_at = $3
             WHERE id = $1 AND smart_charging <> $2",
        )
        .bind(site_id)
        .bind(&settings.mode)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO site_smart_charging (site_id, grid_limit_amps, meter_id, strategy,
               min_amps, safety_margin_amps, fail_safe_amps, meter_timeout_seconds, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (site_id) DO UPDATE SET grid_limit_amps = excluded.grid_limit_amps,
               meter_id = excluded.meter_id, strategy = excluded.strategy,
               min_amps = excluded.min_amps, safety_margin_amps = excluded.safety_margin_amps,
               fail_safe_amps = excluded.fail_safe_amps,
               meter_timeout_seconds = excluded.meter_timeout_seconds,
               updated_at = excluded.updated_at",
        )
        .bind(site_id)
        .bind(settings.grid_limit_amps)
        .bind(settings.meter_id)
        .bind(&settings.strategy)
        .bind(settings.min_amps)
        .bind(settings.safety_margin_amps)
        .bind(settings.fail_safe_amps)
        .bind(settings.meter_timeout_seconds)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM smart_charging_priorities
             WHERE charger_id IN (SELECT id FROM chargers WHERE site_id = $1)",
        )
        .bind(site_id)
        .execute(&mut *tx)
        .await?;
        for (charger_uuid, priority) in &settings.priorities {
            sqlx::query(
                "INSERT INTO smart_charging_priorities (charger_id, priority)
                 SELECT id, $2 FROM chargers WHERE uuid = $1 AND site_id = $3",
            )
            .bind(charger_uuid)
            .bind(priority)
            .bind(site_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.smart_charging_settings(site_id).await
    }

    /// What a site's balancer last computed, with every limit it sent to the site's chargers.
    pub async fn smart_charging_status(&self, site_id: i64) -> Result<SmartChargingStatus> {
        let row = sqlx::query(
            "SELECT s.smart_charging, h.grid_limit_amps, h.computed_at, h.meter_amps,
               h.meter_phases, h.meter_measured_at, h.base_load_amps, h.available_amps,
               h.allocated_amps, h.headroom_amps, h.fail_safe_since
             FROM sites s LEFT JOIN site_smart_charging h ON h.site_id = s.id
             WHERE s.id = $1",
        )
        .bind(site_id)
        .fetch_optional(self.db())
        .await?
        .ok_or_else(|| crate::StoreError::NotFound(format!("no site with id {site_id}")))?;
        let limits = sqlx::query(
            "SELECT c.uuid, c.identity, l.connector_id, l.limit_amps, l.purpose,
               l.transaction_id, l.status, l.sent_at, l.answered_at, l.measured_amps,
               l.paused_since
             FROM smart_charging_limits l JOIN chargers c ON c.id = l.charger_id
             WHERE c.site_id = $1 ORDER BY c.identity, l.connector_id",
        )
        .bind(site_id)
        .fetch_all(self.db())
        .await?;
        // The balancer writes every figure with `computed_at` (`record_site_computation`).
        let computed_at: Option<String> = row.try_get("computed_at")?;
        let computation = match computed_at {
            Some(computed_at) => Some(balancer::site_computation(&row, computed_at)?),
            None => None,
        };
        Ok(SmartChargingStatus {
            mode: row.try_get("smart_charging")?,
            grid_limit_amps: row.try_get("grid_limit_amps")?,
            computation,
            limits: limits.iter().map(connector_limit).collect::<Result<_>>()?,
        })
    }

    /// The id of the `ct_meter` `meter_uuid` if it is attached to a charger of the site.
    pub async fn site_ct_meter_id(&self, site_id: i64, meter_uuid: &str) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT m.id FROM meters m JOIN chargers c ON c.id = m.charger_id
             WHERE m.uuid = $1 AND m.type = $2 AND c.site_id = $3",
        )
        .bind(meter_uuid)
        .bind(CT_METER)
        .bind(site_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// The uuids of the site's chargers a user sees (a guest limited to some assets sees
    /// fewer than the site has).
    pub async fn site_chargers_seen_by(
        &self,
        user_id: i64,
        site_id: i64,
    ) -> Result<HashSet<String>> {
        let uuids: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT c.uuid FROM chargers c JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id
             WHERE c.site_id = $3"
        ))
        .bind(user_id)
        .bind(now_record_time())
        .bind(site_id)
        .fetch_all(self.db())
        .await?;
        Ok(uuids.into_iter().collect())
    }
}

fn saved_settings(row: &AnyRow, mode: String) -> Result<SmartChargingSettings> {
    Ok(SmartChargingSettings {
        mode,
        grid_limit_amps: row.try_get("grid_limit_amps")?,
        meter_id: row.try_get("meter_id")?,
        meter_uuid: row.try_get("meter_uuid")?,
        strategy: row.try_get("strategy")?,
        min_amps: row.try_get("min_amps")?,
        safety_margin_amps: row.try_get("safety_margin_amps")?,
        fail_safe_amps: row.try_get("fail_safe_amps")?,
        meter_timeout_seconds: row.try_get("meter_timeout_seconds")?,
        priorities: Vec::new(),
        updated_at: row.try_get("updated_at")?,
    })
}

fn connector_limit(row: &AnyRow) -> Result<ConnectorLimit> {
    Ok(ConnectorLimit {
        charger_uuid: row.try_get("uuid")?,
        identity: row.try_get("identity")?,
        connector_id: row.try_get("connector_id")?,
        limit_amps: row.try_get("limit_amps")?,
        purpose: row.try_get("purpose")?,
        transaction_id: row.try_get("transaction_id")?,
        status: row.try_get("status")?,
        sent_at: row.try_get("sent_at")?,
        answered_at: row.try_get("answered_at")?,
        measured_amps: row.try_get("measured_amps")?,
        paused_since: row.try_get("paused_since")?,
    })
}
