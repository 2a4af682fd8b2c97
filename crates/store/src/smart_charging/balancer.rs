//! What the balancer reads and keeps: its lease on sites, their inputs, the limits it sent.
//!
//! Every API process runs a balancer; a site is balanced by the one holding its lease
//! (`site_smart_charging.balancer` until `lease_until`), renewed at every poll. A limit is
//! recorded before it is sent, and only while the lease is held, so a balancer that lost its
//! lease (stalled past it) sends nothing more. See docs/smart-charging.md.

use super::SmartChargingMode;
use crate::{Result, Store};
use sqlx::Row;
use sqlx::any::AnyRow;

/// A site the balancer holds, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct BalancedSite {
    pub site_id: i64,
    pub site_uuid: String,
    /// `Disabled`: held only to clear what was sent.
    pub mode: SmartChargingMode,
    pub grid_limit_amps: Option<f64>,
    pub strategy: String,
    pub min_amps: f64,
    pub safety_margin_amps: f64,
    pub fail_safe_amps: f64,
    pub meter_timeout_seconds: i64,
    /// The charger the site's CT meter is attached to (its Inlet readings on connector 0).
    pub meter_charger_id: Option<i64>,
    pub fail_safe_since: Option<String>,
}

/// A charger of a held site.
#[derive(Debug, Clone, PartialEq)]
pub struct BalancedCharger {
    pub charger_id: i64,
    pub site_id: i64,
    pub identity: String,
    /// Its session while it is online.
    pub session: Option<String>,
    pub priority: i64,
    /// Whether it holds the `smart` licence: without it the balancer leaves it out, counting
    /// it at its maximum.
    pub smart_licensed: bool,
    /// `chargers.ocpp_version` (`1.6`, `2.0.1`; none before it first connected): the profiles'
    /// shape. A 2.0.1 station's EVSEs are its connectors.
    pub ocpp_version: Option<String>,
}

/// A connector of a held site with a transaction going on.
#[derive(Debug, Clone, PartialEq)]
pub struct ChargingConnector {
    pub charger_id: i64,
    pub connector_id: i64,
    pub max_amperage: Option<i64>,
    pub transaction_id: i64,
    /// A 2.0.1 station's own transaction id (its TxProfile's `transactionId`); none for 1.6.
    pub station_transaction_id: Option<String>,
    pub started_at: String,
    /// The lowest external limit (a 2.0.1 station's NotifyChargingLimit, in A) on its EVSE or
    /// its whole station: it draws no more, whatever its share.
    pub external_limit_amps: Option<f64>,
}

/// The latest reading of a connector of a held site (connector 0: the charger's own, where a
/// CT meter's Inlet readings are).
#[derive(Debug, Clone, PartialEq)]
pub struct LatestReading {
    pub charger_id: i64,
    pub connector_id: i64,
    /// The REST `meterValue` array.
    pub meter_value: String,
    /// Its newest sample's time (the charger's clock).
    pub measured_at: String,
    /// When the store took it (the store's clock).
    pub updated_at: String,
}

/// The limit last sent to a connector (0: the charger's TxDefaultProfile).
#[derive(Debug, Clone, PartialEq)]
pub struct SentLimit {
    pub charger_id: i64,
    pub connector_id: i64,
    pub limit_amps: f64,
    /// The last limit the charger accepted for this transaction, while a newer one is
    /// unanswered or was refused.
    pub applied_amps: Option<f64>,
    pub purpose: String,
    pub transaction_id: Option<i64>,
    pub session: String,
    pub action_uuid: String,
    /// `pending`, `accepted`, `rejected`, `failed`; `clearing` while its ClearChargingProfile
    /// is in flight.
    pub status: String,
    pub sent_at: String,
    pub answered_at: Option<String>,
    pub measured_amps: Option<f64>,
    pub paused_since: Option<String>,
}

/// What the balancer last computed for a site (the status endpoint's figures).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteComputation {
    pub computed_at: String,
    pub meter_amps: Option<f64>,
    /// JSON object of the phases' currents, e.g. `{"L1":12.5}`.
    pub meter_phases: Option<String>,
    pub meter_measured_at: Option<String>,
    pub base_load_amps: Option<f64>,
    pub available_amps: Option<f64>,
    pub allocated_amps: Option<f64>,
    pub headroom_amps: Option<f64>,
    pub fail_safe_since: Option<String>,
}

/// A connector's figures beside its limit, for the status endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorComputation {
    pub charger_id: i64,
    pub connector_id: i64,
    pub measured_amps: Option<f64>,
    pub paused_since: Option<String>,
}

/// A site needs a balancer: smart charging is on, or limits sent to its chargers are to be
/// cleared.
const NEEDED: &str = "(site_id IN (SELECT id FROM sites WHERE smart_charging <> 'disabled')
     OR site_id IN (SELECT c.site_id FROM smart_charging_limits l
                    JOIN chargers c ON c.id = l.charger_id))";

/// The sites a balancer holds: `site_smart_charging.balancer = $1`.
const HELD: &str = "JOIN site_smart_charging h ON h.site_id = c.site_id AND h.balancer = $1";

impl Store {
    /// Takes the lease, until `until`, on every site that needs a balancer (smart charging on,
    /// or limits sent that are to be cleared) and that no other balancer holds at `now`, and
    /// renews the ones it holds once they would run out before `renew_before`; returns the
    /// sites held, with their settings. Writes only when there is something to take, renew or
    /// let go: most rounds are reads.
    pub async fn claim_smart_charging_sites(
        &self,
        balancer: &str,
        now: &str,
        renew_before: &str,
        until: &str,
    ) -> Result<Vec<BalancedSite>> {
        let due: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT 1 FROM site_smart_charging
             WHERE (balancer = $1 AND lease_until < $2)
                OR ((balancer IS NULL OR lease_until IS NULL OR lease_until < $3) AND {NEEDED})
                OR (balancer = $1 AND NOT {NEEDED})
             LIMIT 1"
        ))
        .bind(balancer)
        .bind(renew_before)
        .bind(now)
        .fetch_optional(self.db())
        .await?;
        if due.is_some() {
            let mut tx = self.begin_write().await?;
            sqlx::query(&format!(
                "UPDATE site_smart_charging SET balancer = $1, lease_until = $2
                 WHERE (balancer = $1 OR balancer IS NULL OR lease_until IS NULL
                        OR lease_until < $3) AND {NEEDED}"
            ))
            .bind(balancer)
            .bind(until)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            // A site turned off with nothing left to clear is let go.
            sqlx::query(&format!(
                "UPDATE site_smart_charging SET balancer = NULL, lease_until = NULL
                 WHERE balancer = $1 AND NOT {NEEDED}"
            ))
            .bind(balancer)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        }
        let rows = sqlx::query(
            "SELECT s.id, s.uuid, s.smart_charging, h.grid_limit_amps, h.strategy, h.min_amps,
               h.safety_margin_amps, h.fail_safe_amps, h.meter_timeout_seconds, h.fail_safe_since,
               m.charger_id AS meter_charger_id
             FROM site_smart_charging h JOIN sites s ON s.id = h.site_id
             LEFT JOIN meters m ON m.id = h.meter_id
             WHERE h.balancer = $1 AND h.lease_until >= $2
             ORDER BY s.id",
        )
        .bind(balancer)
        .bind(now)
        .fetch_all(self.db())
        .await?;
        rows.iter().map(balanced_site).collect()
    }

    /// Lets go of every site this balancer holds (at shutdown), so another takes them at once.
    pub async fn release_smart_charging_sites(&self, balancer: &str) -> Result<()> {
        sqlx::query(
            "UPDATE site_smart_charging SET balancer = NULL, lease_until = NULL
             WHERE balancer = $1",
        )
        .bind(balancer)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// The chargers of the sites `balancer` holds.
    pub async fn balanced_chargers(&self, balancer: &str) -> Result<Vec<BalancedCharger>> {
        let rows = sqlx::query(&format!(
            "SELECT c.id, c.site_id, c.identity, c.session, c.connection_status,
               COALESCE(p.priority, 0) AS priority, c.license_smart, c.ocpp_version
             FROM chargers c {HELD}
             LEFT JOIN smart_charging_priorities p ON p.charger_id = c.id
             ORDER BY c.id"
        ))
        .bind(balancer)
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|row| {
                let online = row.try_get::<String, _>("connection_status")? == "online";
                Ok(BalancedCharger {
                    charger_id: row.try_get("id")?,
                    site_id: row.try_get("site_id")?,
                    identity: row.try_get("identity")?,
                    session: row
                        .try_get::<Option<String>, _>("session")?
                        .filter(|_| online),
                    priority: row.try_get("priority")?,
                    smart_licensed: crate::flag(row, "license_smart")?,
                    ocpp_version: row.try_get("ocpp_version")?,
                })
            })
            .collect()
    }

    /// The connectors of the held sites that are charging: a transaction is open on them and
    /// their status does not say it is over (an open transaction on an Available connector is
    /// one whose stop never arrived). A connector that never sent its status has the store's
    /// default, Unavailable, and counts.
    pub async fn charging_connectors(&self, balancer: &str) -> Result<Vec<ChargingConnector>> {
        let rows = sqlx::query(&format!(
            "SELECT t.charger_id, t.connector_id, k.max_amperage, t.ocpp_transaction_id,
               t.station_transaction_id, t.started_at,
               (SELECT MIN(x.limit_amps) FROM station_charging_limits x
                WHERE x.charger_id = t.charger_id AND x.evse_id IN (0, t.connector_id))
                 AS external_limit_amps
             FROM transactions t JOIN chargers c ON c.id = t.charger_id {HELD}
             LEFT JOIN connectors k ON k.charger_id = t.charger_id
               AND k.connector_id = t.connector_id
             WHERE t.stopped_at IS NULL AND t.connector_id > 0
               AND (k.status IS NULL OR k.status NOT IN
                    ('Available', 'Finishing', 'Faulted', 'Reserved'))
             ORDER BY t.charger_id, t.connector_id, t.started_at"
        ))
        .bind(balancer)
        .fetch_all(self.db())
        .await?;
        let mut connectors: Vec<ChargingConnector> = Vec::with_capacity(rows.len());
        for row in &rows {
            let connector = ChargingConnector {
                charger_id: row.try_get("charger_id")?,
                connector_id: row.try_get("connector_id")?,
                max_amperage: row.try_get("max_amperage")?,
                transaction_id: row.try_get("ocpp_transaction_id")?,
                station_transaction_id: row.try_get("station_transaction_id")?,
                started_at: row.try_get("started_at")?,
                external_limit_amps: row.try_get("external_limit_amps")?,
            };
            // Of two open transactions on one connector, the newer is the one going on.
            match connectors.last_mut() {
                Some(last)
                    if last.charger_id == connector.charger_id
                        && last.connector_id == connector.connector_id =>
                {
                    *last = connector
                }
                _ => connectors.push(connector),
            }
        }
        Ok(connectors)
    }

    /// The latest readings of every connector of the held sites (connector 0 included).
    pub async fn balanced_readings(&self, balancer: &str) -> Result<Vec<LatestReading>> {
        let rows = sqlx::query(&format!(
            "SELECT v.charger_id, v.connector_id, v.meter_value, v.measured_at, v.updated_at
             FROM latest_meter_values v JOIN chargers c ON c.id = v.charger_id {HELD}"
        ))
        .bind(balancer)
        .fetch_all(self.db())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(LatestReading {
                    charger_id: row.try_get("charger_id")?,
                    connector_id: row.try_get("connector_id")?,
                    meter_value: row.try_get("meter_value")?,
                    measured_at: row.try_get("measured_at")?,
                    updated_at: row.try_get("updated_at")?,
                })
            })
            .collect()
    }

    /// The limits sent to the chargers of the held sites.
    pub async fn sent_limits(&self, balancer: &str) -> Result<Vec<SentLimit>> {
        let rows = sqlx::query(&format!(
            "SELECT l.charger_id, l.connector_id, l.limit_amps, l.applied_amps, l.purpose,
               l.transaction_id,
               l.session, l.action_uuid, l.status, l.sent_at, l.answered_at, l.measured_amps,
               l.paused_since
             FROM smart_charging_limits l JOIN chargers c ON c.id = l.charger_id {HELD}
             ORDER BY l.charger_id, l.connector_id"
        ))
        .bind(balancer)
        .fetch_all(self.db())
        .await?;
        rows.iter().map(sent_limit).collect()
    }

    /// Records a limit about to be sent, only while `balancer` holds the charger's site at
    /// `now`; `false` (nothing recorded, nothing to send) when it does not. Not a prepared
    /// statement kept for reuse: its parameters' types would be those of the first values bound
    /// (a null where a number comes later fails on PostgreSQL).
    pub async fn record_limit(&self, balancer: &str, now: &str, limit: &SentLimit) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO smart_charging_limits (charger_id, connector_id, limit_amps, purpose,
               transaction_id, session, action_uuid, status, sent_at, answered_at, measured_amps,
               paused_since, applied_amps)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $15
             WHERE EXISTS (SELECT 1 FROM chargers c
                           JOIN site_smart_charging h ON h.site_id = c.site_id
                           WHERE c.id = $1 AND h.balancer = $13 AND h.lease_until >= $14)
             ON CONFLICT (charger_id, connector_id) DO UPDATE SET
               limit_amps = excluded.limit_amps, applied_amps = excluded.applied_amps,
               purpose = excluded.purpose,
               transaction_id = excluded.transaction_id, session = excluded.session,
               action_uuid = excluded.action_uuid, status = excluded.status,
               sent_at = excluded.sent_at, answered_at = excluded.answered_at,
               measured_amps = excluded.measured_amps, paused_since = excluded.paused_since",
        )
        .persistent(false)
        .bind(limit.charger_id)
        .bind(limit.connector_id)
        .bind(limit.limit_amps)
        .bind(&limit.purpose)
        .bind(limit.transaction_id)
        .bind(&limit.session)
        .bind(&limit.action_uuid)
        .bind(&limit.status)
        .bind(&limit.sent_at)
        .bind(&limit.answered_at)
        .bind(limit.measured_amps)
        .bind(&limit.paused_since)
        .bind(balancer)
        .bind(now)
        .bind(limit.applied_amps)
        .execute(self.db())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Records the charger's answer to the limit sent as `action_uuid` (a later one replaced
    /// it: nothing changes); an accepted limit is the one applied from then on.
    pub async fn record_limit_answer(
        &self,
        charger_id: i64,
        connector_id: i64,
        action_uuid: &str,
        status: &str,
        at: &str,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE smart_charging_limits SET status = $1, answered_at = $2,
               applied_amps = CASE WHEN $1 = 'accepted' THEN limit_amps ELSE applied_amps END
             WHERE charger_id = $3 AND connector_id = $4 AND action_uuid = $5",
        )
        .bind(status)
        .bind(at)
        .bind(charger_id)
        .bind(connector_id)
        .bind(action_uuid)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Forgets a limit (its transaction ended, or its profile was cleared), unless a newer
    /// one replaced it meanwhile.
    pub async fn forget_limit(
        &self,
        charger_id: i64,
        connector_id: i64,
        action_uuid: &str,
    ) -> Result<()> {
        sqlx::query(
            "DELETE FROM smart_charging_limits
             WHERE charger_id = $1 AND connector_id = $2 AND action_uuid = $3",
        )
        .bind(charger_id)
        .bind(connector_id)
        .bind(action_uuid)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Records what the balancer computed for a site and its connectors, in one transaction.
    pub async fn record_site_computation(
        &self,
        site_id: i64,
        site: &SiteComputation,
        connectors: &[ConnectorComputation],
    ) -> Result<()> {
        let mut tx = self.begin_write().await?;
        // The site going over its limit is told once, when it does (webhooks).
        let before: Option<Option<f64>> =
            sqlx::query_scalar("SELECT headroom_amps FROM site_smart_charging WHERE site_id = $1")
                .bind(site_id)
                .fetch_optional(&mut *tx)
                .await?;
        let was_over = before.flatten().is_some_and(|h| h < 0.0);
        if !was_over && site.headroom_amps.is_some_and(|h| h < 0.0) {
            crate::webhooks::outbox::site_over_limit(&mut tx, site_id, site).await?;
        }
        sqlx::query(
            "UPDATE site_smart_charging SET computed_at = $1, meter_amps = $2, meter_phases = $3,
               meter_measured_at = $4, base_load_amps = $5, available_amps = $6,
               allocated_amps = $7, headroom_amps = $8, fail_safe_since = $9
             WHERE site_id = $10",
        )
        .bind(&site.computed_at)
        .bind(site.meter_amps)
        .bind(&site.meter_phases)
        .bind(&site.meter_measured_at)
        .bind(site.base_load_amps)
        .bind(site.available_amps)
        .bind(site.allocated_amps)
        .bind(site.headroom_amps)
        .bind(&site.fail_safe_since)
        .bind(site_id)
        .execute(&mut *tx)
        .await?;
        for c in connectors {
            sqlx::query(
                "UPDATE smart_charging_limits SET measured_amps = $1, paused_since = $2
                 WHERE charger_id = $3 AND connector_id = $4",
            )
            .bind(c.measured_amps)
            .bind(&c.paused_since)
            .bind(c.charger_id)
            .bind(c.connector_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The site's mode; a word the API never writes is the row's decoding error.
fn mode_of(row: &AnyRow) -> Result<SmartChargingMode> {
    let text: String = row.try_get("smart_charging")?;
    SmartChargingMode::parse(&text).ok_or_else(|| {
        sqlx::Error::ColumnDecode {
            index: "smart_charging".into(),
            source: format!("not a smart-charging mode: {text:?}").into(),
        }
        .into()
    })
}

fn balanced_site(row: &AnyRow) -> Result<BalancedSite> {
    Ok(BalancedSite {
        site_id: row.try_get("id")?,
        site_uuid: row.try_get("uuid")?,
        mode: mode_of(row)?,
        grid_limit_amps: row.try_get("grid_limit_amps")?,
        strategy: row.try_get("strategy")?,
        min_amps: row.try_get("min_amps")?,
        safety_margin_amps: row.try_get("safety_margin_amps")?,
        fail_safe_amps: row.try_get("fail_safe_amps")?,
        meter_timeout_seconds: row.try_get("meter_timeout_seconds")?,
        meter_charger_id: row.try_get("meter_charger_id")?,
        fail_safe_since: row.try_get("fail_safe_since")?,
    })
}

/// The figures `record_site_computation` wrote, from a row of `site_smart_charging`.
pub(super) fn site_computation(row: &AnyRow, computed_at: String) -> Result<SiteComputation> {
    Ok(SiteComputation {
        computed_at,
        meter_amps: row.try_get("meter_amps")?,
        meter_phases: row.try_get("meter_phases")?,
        meter_measured_at: row.try_get("meter_measured_at")?,
        base_load_amps: row.try_get("base_load_amps")?,
        available_amps: row.try_get("available_amps")?,
        allocated_amps: row.try_get("allocated_amps")?,
        headroom_amps: row.try_get("headroom_amps")?,
        fail_safe_since: row.try_get("fail_safe_since")?,
    })
}

fn sent_limit(row: &AnyRow) -> Result<SentLimit> {
    Ok(SentLimit {
        charger_id: row.try_get("charger_id")?,
        connector_id: row.try_get("connector_id")?,
        limit_amps: row.try_get("limit_amps")?,
        applied_amps: row.try_get("applied_amps")?,
        purpose: row.try_get("purpose")?,
        transaction_id: row.try_get("transaction_id")?,
        session: row.try_get("session")?,
        action_uuid: row.try_get("action_uuid")?,
        status: row.try_get("status")?,
        sent_at: row.try_get("sent_at")?,
        answered_at: row.try_get("answered_at")?,
        measured_amps: row.try_get("measured_amps")?,
        paused_since: row.try_get("paused_since")?,
    })
}

#[cfg(test)]
mod tests;
