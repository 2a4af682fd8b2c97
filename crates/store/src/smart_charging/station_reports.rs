//! What a 2.0.1 station tells of its smart charging (block K), kept as it told it: the
//! external limits on its EVSEs (NotifyChargingLimit, ClearedChargingLimit), its EVs' needs
//! and schedules (NotifyEVChargingNeeds, NotifyEVChargingSchedule), and the profiles it
//! reported (ReportChargingProfiles). The balancer respects the external limits; the REST API
//! shows all of it (`GET /api/v3/chargers/{uuid}/charging-limits`).

use crate::{Result, Store};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// One call of a station, as the materialiser read it.
#[derive(Debug, Clone, PartialEq)]
pub struct StationReport {
    pub identity: String,
    /// When the gateway received it (record time).
    pub at: String,
    pub told: Told,
}

/// What the call told. JSON fields are the station's own objects, as text.
#[derive(Debug, Clone, PartialEq)]
pub enum Told {
    /// NotifyChargingLimit: an external limit on EVSE `evse_id` (0: the station).
    ChargingLimit {
        evse_id: i64,
        source: String,
        grid_critical: Option<bool>,
        /// The lowest limit in A of its schedules.
        limit_amps: Option<f64>,
        charging_schedule: Option<String>,
    },
    /// ClearedChargingLimit: the limit of `source` on EVSE `evse_id` (0: the station) is over.
    ChargingLimitCleared { evse_id: i64, source: String },
    /// NotifyEVChargingNeeds.
    EvChargingNeeds {
        evse_id: i64,
        charging_needs: String,
        max_schedule_tuples: Option<i64>,
    },
    /// NotifyEVChargingSchedule.
    EvChargingSchedule {
        evse_id: i64,
        time_base: String,
        charging_schedule: String,
    },
    /// ReportChargingProfiles: some of the profiles answering GetChargingProfiles `request_id`,
    /// each `(id, profile)`.
    ChargingProfiles {
        request_id: i64,
        evse_id: i64,
        source: String,
        profiles: Vec<(i64, String)>,
    },
}

/// An external limit a station holds, as the API shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalLimit {
    pub evse_id: i64,
    pub source: String,
    pub grid_critical: Option<bool>,
    pub limit_amps: Option<f64>,
    pub charging_schedule: Option<String>,
    pub reported_at: String,
}

/// What the EV on an EVSE asked for and chose.
#[derive(Debug, Clone, PartialEq)]
pub struct EvNeeds {
    pub evse_id: i64,
    pub charging_needs: Option<String>,
    pub max_schedule_tuples: Option<i64>,
    pub needs_at: Option<String>,
    pub charging_schedule: Option<String>,
    pub schedule_time_base: Option<String>,
    pub schedule_at: Option<String>,
}

/// A profile the station reported.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedProfile {
    pub request_id: i64,
    pub evse_id: i64,
    pub source: String,
    pub charging_profile: String,
    pub reported_at: String,
}

/// Everything a station told of its smart charging.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChargingReports {
    pub limits: Vec<ExternalLimit>,
    pub ev_needs: Vec<EvNeeds>,
    pub profiles: Vec<ReportedProfile>,
}

/// Keeps what a station told (a station not registered is skipped).
pub(crate) async fn keep(db: &mut AnyConnection, report: &StationReport) -> Result<()> {
    let Some(charger_id): Option<i64> =
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(&report.identity)
            .fetch_optional(&mut *db)
            .await?
    else {
        return Ok(());
    };
    let at = &report.at;
    match &report.told {
        Told::ChargingLimit {
            evse_id,
            source,
            grid_critical,
            limit_amps,
            charging_schedule,
        } => {
            sqlx::query(
                "INSERT INTO station_charging_limits (charger_id, evse_id, source, grid_critical,
                   limit_amps, charging_schedule, reported_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (charger_id, evse_id, source) DO UPDATE SET
                   grid_critical = excluded.grid_critical, limit_amps = excluded.limit_amps,
                   charging_schedule = excluded.charging_schedule,
                   reported_at = excluded.reported_at",
            )
            .persistent(false)
            .bind(charger_id)
            .bind(evse_id)
            .bind(source)
            .bind(grid_critical.map(i64::from))
            .bind(limit_amps)
            .bind(charging_schedule)
            .bind(at)
            .execute(&mut *db)
            .await?;
        }
        Told::ChargingLimitCleared { evse_id, source } => {
            sqlx::query(
                "DELETE FROM station_charging_limits
                 WHERE charger_id = $1 AND evse_id = $2 AND source = $3",
            )
            .bind(charger_id)
            .bind(evse_id)
            .bind(source)
            .execute(&mut *db)
            .await?;
        }
        Told::EvChargingNeeds {
            evse_id,
            charging_needs,
            max_schedule_tuples,
        } => {
            sqlx::query(
                "INSERT INTO ev_charging_needs (charger_id, evse_id, charging_needs,
                   max_schedule_tuples, needs_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (charger_id, evse_id) DO UPDATE SET
                   charging_needs = excluded.charging_needs,
                   max_schedule_tuples = excluded.max_schedule_tuples,
                   needs_at = excluded.needs_at",
            )
            .persistent(false)
            .bind(charger_id)
            .bind(evse_id)
            .bind(charging_needs)
            .bind(max_schedule_tuples)
            .bind(at)
            .execute(&mut *db)
            .await?;
        }
        Told::EvChargingSchedule {
            evse_id,
            time_base,
            charging_schedule,
        } => {
            sqlx::query(
                "INSERT INTO ev_charging_needs (charger_id, evse_id, charging_schedule,
                   schedule_time_base, schedule_at)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (charger_id, evse_id) DO UPDATE SET
                   charging_schedule = excluded.charging_schedule,
                   schedule_time_base = excluded.schedule_time_base,
                   schedule_at = excluded.schedule_at",
            )
            .bind(charger_id)
            .bind(evse_id)
            .bind(charging_schedule)
            .bind(time_base)
            .bind(at)
            .execute(&mut *db)
            .await?;
        }
        Told::ChargingProfiles {
            request_id,
            evse_id,
            source,
            profiles,
        } => {
            // A report of a newer request replaces what the older ones reported.
            sqlx::query(
                "DELETE FROM reported_charging_profiles WHERE charger_id = $1 AND request_id <> $2",
            )
            .bind(charger_id)
            .bind(request_id)
            .execute(&mut *db)
            .await?;
            for (profile_id, profile) in profiles {
                sqlx::query(
                    "INSERT INTO reported_charging_profiles (charger_id, request_id, evse_id,
                       profile_id, source, charging_profile, reported_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)
                     ON CONFLICT (charger_id, evse_id, profile_id, source) DO UPDATE SET
                       request_id = excluded.request_id,
                       charging_profile = excluded.charging_profile,
                       reported_at = excluded.reported_at",
                )
                .bind(charger_id)
                .bind(request_id)
                .bind(evse_id)
                .bind(profile_id)
                .bind(source)
                .bind(profile)
                .bind(at)
                .execute(&mut *db)
                .await?;
            }
        }
    }
    Ok(())
}

impl Store {
    /// What charger `charger_id` told of its smart charging, each list by EVSE.
    pub async fn charging_reports(&self, charger_id: i64) -> Result<ChargingReports> {
        let limits = sqlx::query(
            "SELECT evse_id, source, grid_critical, limit_amps, charging_schedule, reported_at
             FROM station_charging_limits WHERE charger_id = $1 ORDER BY evse_id, source",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        let needs = sqlx::query(
            "SELECT evse_id, charging_needs, max_schedule_tuples, needs_at, charging_schedule,
               schedule_time_base, schedule_at
             FROM ev_charging_needs WHERE charger_id = $1 ORDER BY evse_id",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        let profiles = sqlx::query(
            "SELECT request_id, evse_id, source, charging_profile, reported_at
             FROM reported_charging_profiles WHERE charger_id = $1
             ORDER BY evse_id, profile_id, source",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        Ok(ChargingReports {
            limits: limits.iter().map(external_limit).collect::<Result<_>>()?,
            ev_needs: needs.iter().map(ev_needs).collect::<Result<_>>()?,
            profiles: profiles.iter().map(reported).collect::<Result<_>>()?,
        })
    }
}

fn external_limit(row: &AnyRow) -> Result<ExternalLimit> {
    Ok(ExternalLimit {
        evse_id: row.try_get("evse_id")?,
        source: row.try_get("source")?,
        grid_critical: row
            .try_get::<Option<i64>, _>("grid_critical")?
            .map(|f| f != 0),
        limit_amps: row.try_get("limit_amps")?,
        charging_schedule: row.try_get("charging_schedule")?,
        reported_at: row.try_get("reported_at")?,
    })
}

fn ev_needs(row: &AnyRow) -> Result<EvNeeds> {
    Ok(EvNeeds {
        evse_id: row.try_get("evse_id")?,
        charging_needs: row.try_get("charging_needs")?,
        max_schedule_tuples: row.try_get("max_schedule_tuples")?,
        needs_at: row.try_get("needs_at")?,
        charging_schedule: row.try_get("charging_schedule")?,
        schedule_time_base: row.try_get("schedule_time_base")?,
        schedule_at: row.try_get("schedule_at")?,
    })
}

fn reported(row: &AnyRow) -> Result<ReportedProfile> {
    Ok(ReportedProfile {
        request_id: row.try_get("request_id")?,
        evse_id: row.try_get("evse_id")?,
        source: row.try_get("source")?,
        charging_profile: row.try_get("charging_profile")?,
        reported_at: row.try_get("reported_at")?,
    })
}

#[cfg(test)]
mod tests;
