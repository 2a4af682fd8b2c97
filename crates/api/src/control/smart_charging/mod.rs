//! The balancer of Sites > Smart Charging: keeps each site's chargers under its grid limit
//! with SetChargingProfile, sent through Chargers > Actions (docs/smart-charging.md).
//!
//! Every API process runs one. Each poll it takes or renews its lease on the sites no other
//! live balancer holds, reads their inputs from the store (the materialised readings,
//! transactions, connector statuses, the limits sent), plans each site (`plan`) and carries
//! the plan out. The limits it sends are recorded before they go, so that a balancer that
//! takes a site over (another process stopped) knows what the chargers hold and sends again
//! what was in flight.

mod allocate;
mod plan;
mod profiles_v201;
mod readings;

pub use plan::Pacing;

use crate::control::actions::{ActionTimes, Dispatch, Target, charger_version};
use chrono::Utc;
use cms_bus::{ActionName, ActionReport, ActionStatus, RequestedBy};
use cms_ocpp::{OcppVersion, v201};
use cms_store::format_record_time;
use cms_store::smart_charging::balancer::{
    BalancedCharger, ChargingConnector, ConnectorComputation, LatestReading, SentLimit,
    SiteComputation,
};
use plan::{GridReading, Inputs, PROFILE_ID_BASE, Plan, Step, TX_DEFAULT};
use readings::currents;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the balancer paces itself.
#[derive(Debug, Clone, Copy)]
pub struct SmartChargingConfig {
    /// How often it recomputes every site it holds (an answer from a charger wakes it too).
    pub poll: Duration,
    /// How long its hold on a site lasts unless renewed: how long a site waits for another
    /// balancer after this one's process died.
    pub lease: Duration,
    pub pacing: Pacing,
}

impl Default for SmartChargingConfig {
    fn default() -> Self {
        SmartChargingConfig {
            poll: Duration::from_millis(500),
            lease: Duration::from_secs(10),
            pacing: Pacing {
                min_interval: Duration::from_secs(3),
                retry_after: Duration::from_secs(30),
                answer_grace: Duration::from_secs(2),
                default_max_amps: 32.0,
            },
        }
    }
}

/// How often a site's status is written when nothing in it changed.
const STATUS_REFRESH: Duration = Duration::from_secs(5);
/// A limit is worthless late: one not sent within the first, or unanswered within the
/// second, ends (and is sent again from what is known then).
const CALL_TIMES: ActionTimes = ActionTimes {
    ttl: Duration::from_secs(10),
    timeout: Duration::from_secs(10),
};
/// How long after its call's times the end of a limit is waited for (the gateway's report,
/// or the sweep's).
const END_MARGIN: Duration = Duration::from_secs(5);

/// Balances the sites until `stop`, then lets go of them.
pub async fn balance_sites(
    dispatch: Arc<Dispatch>,
    config: SmartChargingConfig,
    stop: CancellationToken,
) {
    register_metrics();
    let mut balancer = Balancer {
        name: format!("balancer-{}", uuid::Uuid::new_v4()),
        dispatch,
        config,
        in_flight: Arc::new(Mutex::new(HashSet::new())),
        wake: Arc::new(Notify::new()),
        waiters: JoinSet::new(),
        written: HashMap::new(),
        grids: HashMap::new(),
        last_poll: Instant::now(),
        fail_safe_time: Duration::ZERO,
    };
    while !stop.is_cancelled() {
        if let Err(e) = balancer.poll().await {
            tracing::error!(error = %e, "cannot balance the smart charging sites");
        }
        while balancer.waiters.try_join_next().is_some() {}
        let wake = balancer.wake.clone();
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(balancer.config.poll) => {}
            _ = wake.notified() => {}
        }
    }
    balancer.waiters.abort_all();
    if let Err(e) = balancer
        .dispatch
        .store
        .release_smart_charging_sites(&balancer.name)
        .await
    {
        tracing::warn!(error = %e, "cannot let go of the smart charging sites");
    }
}

/// What a charging limit's call came to: `sent`, then `accepted` or `rejected` by the
/// charger, or `failed` (never taken or never answered).
const LIMIT_OUTCOMES: [&str; 4] = ["sent", "accepted", "rejected", "failed"];

/// The balancer's metrics at 0 before its first round and its first limit, so that a panel
/// reads 0 and an alert sees the first one (the per-site headroom comes with each site).
fn register_metrics() {
    for outcome in LIMIT_OUTCOMES {
        metrics::counter!("cms_smart_charging_limits_total", "outcome" => outcome).absolute(0);
    }
    metrics::counter!("cms_smart_charging_fail_safe_seconds_total").absolute(0);
    metrics::gauge!("cms_smart_charging_sites_balanced").set(0.0);
    metrics::gauge!("cms_smart_charging_sites_in_fail_safe").set(0.0);
}

struct Balancer {
    /// Its name in the sites' leases.
    name: String,
    dispatch: Arc<Dispatch>,
    config: SmartChargingConfig,
    /// The calls it sent whose end it waits for, by action uuid.
    in_flight: Arc<Mutex<HashSet<String>>>,
    /// Notified when one of them ended.
    wake: Arc<Notify>,
    waiters: JoinSet<()>,
    /// What it last wrote of each site's status, and when.
    written: HashMap<i64, (SiteComputation, Vec<ConnectorComputation>, Instant)>,
    /// Each site's last grid reading: kept when the meter's charger sends a reading without
    /// the current (an energy register alone), which replaces it in the store.
    grids: HashMap<i64, GridReading>,
    last_poll: Instant,
    /// Time in fail-safe not yet counted in whole seconds.
    fail_safe_time: Duration,
}

impl Balancer {
    async fn poll(&mut self) -> cms_store::Result<()> {
        let store = self.dispatch.store.clone();
        let now = Utc::now();
        let lease = chrono::Duration::from_std(self.config.lease).unwrap_or_default();
        // Renewed once two thirds of it are left, not every round: most rounds only read.
        let sites = store
            .claim_smart_charging_sites(
                &self.name,
                &format_record_time(now),
                &format_record_time(now + lease * 2 / 3),
                &format_record_time(now + lease),
            )
            .await?;
        let elapsed = std::mem::replace(&mut self.last_poll, Instant::now()).elapsed();
        metrics::gauge!("cms_smart_charging_sites_balanced").set(sites.len() as f64);
        let held = |id: &i64| sites.iter().any(|s| s.site_id == *id);
        self.written.retain(|id, _| held(id));
        self.grids.retain(|id, _| held(id));
        if sites.is_empty() {
            metrics::gauge!("cms_smart_charging_sites_in_fail_safe").set(0.0);
            return Ok(());
        }
        let chargers = store.balanced_chargers(&self.name).await?;
        let charging = store.charging_connectors(&self.name).await?;
        let readings = store.balanced_readings(&self.name).await?;
        let limits = store.sent_limits(&self.name).await?;
        let site_of: HashMap<i64, i64> =
            chargers.iter().map(|c| (c.charger_id, c.site_id)).collect();
        let readings: HashMap<(i64, i64), &LatestReading> = readings
            .iter()
            .map(|r| ((r.charger_id, r.connector_id), r))
            .collect();
        let in_flight = self.in_flight.lock().expect("in flight").clone();
        let words = Words {
            versions: chargers
                .iter()
                .map(|c| (c.charger_id, charger_version(c.ocpp_version.as_deref())))
                .collect(),
            station_transactions: charging
                .iter()
                .filter_map(|c| {
                    let id = c.station_transaction_id.clone()?;
                    Some(((c.charger_id, c.transaction_id), id))
                })
                .collect(),
        };
        let mut in_fail_safe = 0;
        for site in &sites {
            let on_site = |charger_id: &i64| site_of.get(charger_id) == Some(&site.site_id);
            let site_chargers: Vec<&BalancedCharger> = chargers
                .iter()
                .filter(|c| c.site_id == site.site_id)
                .collect();
            let site_charging: Vec<&ChargingConnector> =
                charging.iter().filter(|c| on_site(&c.charger_id)).collect();
            let site_limits: HashMap<(i64, i64), &SentLimit> = limits
                .iter()
                .filter(|l| on_site(&l.charger_id))
                .map(|l| ((l.charger_id, l.connector_id), l))
                .collect();
            let meter = site.meter_charger_id.and_then(|id| readings.get(&(id, 0)));
            if let Some(reading) = meter
                && let Some(phases) = currents(&reading.meter_value, "Inlet")
            {
                let at = reading
                    .measured_at
                    .as_str()
                    .min(reading.updated_at.as_str());
                let grid = GridReading {
                    phases,
                    at: at.to_string(),
                };
                self.grids.insert(site.site_id, grid);
            }
            let plan = plan::plan(&Inputs {
                site,
                chargers: &site_chargers,
                charging: &site_charging,
                readings: &readings,
                grid: self.grids.get(&site.site_id),
                limits: &site_limits,
                in_flight: &in_flight,
                now,
                pacing: self.config.pacing,
            });
            if plan.computation.fail_safe_since.is_some() {
                in_fail_safe += 1;
                // Rounds are shorter than a second: the counter gets whole seconds as they
                // accrue.
                self.fail_safe_time += elapsed;
                let whole = self.fail_safe_time.as_secs();
                self.fail_safe_time -= Duration::from_secs(whole);
                metrics::counter!("cms_smart_charging_fail_safe_seconds_total").increment(whole);
                if site.fail_safe_since.is_none() {
                    tracing::warn!(site = %site.site_uuid, "the site's meter is quiet: its chargers fall back to their fail-safe current");
                }
            } else if site.fail_safe_since.is_some() {
                tracing::info!(site = %site.site_uuid, "the site's meter reads again: balancing resumes");
            }
            if let Some(headroom) = plan.computation.headroom_amps {
                metrics::gauge!("cms_smart_charging_headroom_amps", "site" => site.site_uuid.clone())
                    .set(headroom);
            }
            // One site's failure (the store busy, say) is not the others'.
            if let Err(e) = self.carry_out(site.site_id, plan, &words).await {
                tracing::error!(error = %e, site = %site.site_uuid, "cannot balance a site this round");
            }
        }
        metrics::gauge!("cms_smart_charging_sites_in_fail_safe").set(in_fail_safe as f64);
        Ok(())
    }

    async fn carry_out(
        &mut self,
        site_id: i64,
        plan: Plan,
        words: &Words,
    ) -> cms_store::Result<()> {
        let store = self.dispatch.store.clone();
        let Plan {
            computation,
            connectors,
            steps,
        } = plan;
        for step in steps {
            match step {
                Step::Forget(limit) => {
                    store
                        .forget_limit(limit.charger_id, limit.connector_id, &limit.action_uuid)
                        .await?
                }
                Step::Send(limit, identity) => {
                    let Some(request) = words.set_charging_profile(&limit) else {
                        // Its transaction ended since the round read it: the next round
                        // forgets the limit.
                        continue;
                    };
                    let version = words.version(limit.charger_id);
                    self.send(limit, &identity, "SetChargingProfile", (request, version))
                        .await?
                }
                Step::Clear(limit, identity) => {
                    let request = words.clear_charging_profile(&limit);
                    let version = words.version(limit.charger_id);
                    self.send(limit, &identity, "ClearChargingProfile", (request, version))
                        .await?
                }
            }
        }
        // The status is written when it changed, and refreshed now and then.
        let mut unstamped = computation.clone();
        unstamped.computed_at.clear();
        let due = self.written.get(&site_id).is_none_or(|(site, conns, at)| {
            *site != unstamped || *conns != connectors || at.elapsed() >= STATUS_REFRESH
        });
        if due {
            store
                .record_site_computation(site_id, &computation, &connectors)
                .await?;
            self.written
                .insert(site_id, (unstamped, connectors, Instant::now()));
        }
        Ok(())
    }

    /// Records the limit (while the site is held) and sends it; its end is recorded when the
    /// charger answers.
    async fn send(
        &mut self,
        limit: SentLimit,
        identity: &str,
        action: &'static str,
        (request, version): (Value, OcppVersion),
    ) -> cms_store::Result<()> {
        let store = self.dispatch.store.clone();
        let now = format_record_time(Utc::now());
        if !store.record_limit(&self.name, &now, &limit).await? {
            return Ok(());
        }
        let target = Target {
            charger_id: limit.charger_id,
            identity,
            session: &limit.session,
        };
        let call = match version {
            OcppVersion::V201 => {
                v201::Command::from_name(action).map_or(action.into(), ActionName::V201)
            }
            OcppVersion::V16 => action.into(),
        };
        let taken = self
            .dispatch
            .take_command(
                limit.action_uuid.clone(),
                &target,
                call,
                request,
                RequestedBy::system(),
                CALL_TIMES,
            )
            .await;
        if action == "SetChargingProfile" {
            metrics::counter!("cms_smart_charging_limits_total", "outcome" => "sent").increment(1);
        }
        let ended = match taken {
            Ok((_, ended)) => ended,
            Err(e) => {
                tracing::error!(error = %e, identity, "cannot send {action}");
                if action == "SetChargingProfile" {
                    metrics::counter!("cms_smart_charging_limits_total", "outcome" => "failed")
                        .increment(1);
                }
                store
                    .record_limit_answer(
                        limit.charger_id,
                        limit.connector_id,
                        &limit.action_uuid,
                        "failed",
                        &now,
                    )
                    .await?;
                return Ok(());
            }
        };
        self.in_flight
            .lock()
            .expect("in flight")
            .insert(limit.action_uuid.clone());
        let dispatch = self.dispatch.clone();
        let in_flight = self.in_flight.clone();
        let wake = self.wake.clone();
        let deadline = Instant::now() + CALL_TIMES.ttl + CALL_TIMES.timeout + END_MARGIN;
        let identity = identity.to_string();
        self.waiters.spawn(async move {
            let report = dispatch
                .end_of(&limit.action_uuid, ended, deadline)
                .await
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "cannot store the end of a smart charging call");
                    None
                });
            if let Err(e) = settle(&dispatch, &limit, &identity, action, report).await {
                tracing::warn!(error = %e, "cannot record a charger's answer to its limit");
            }
            in_flight
                .lock()
                .expect("in flight")
                .remove(&limit.action_uuid);
            wake.notify_one();
        });
        Ok(())
    }
}

/// Records how a charger answered a limit (or a clear).
async fn settle(
    dispatch: &Dispatch,
    limit: &SentLimit,
    identity: &str,
    action: &str,
    report: Option<ActionReport>,
) -> cms_store::Result<()> {
    let store = &dispatch.store;
    let at = format_record_time(Utc::now());
    let answer = report
        .as_ref()
        .filter(|r| r.status == ActionStatus::Answered)
        .and_then(|r| r.response.as_ref())
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str);
    if action == "ClearChargingProfile" {
        // Unknown: the charger holds no such profile any more, which is the point.
        if matches!(answer, Some("Accepted" | "Unknown")) {
            store
                .forget_limit(limit.charger_id, limit.connector_id, &limit.action_uuid)
                .await?;
        }
        return Ok(());
    }
    let outcome = match answer {
        Some("Accepted") => "accepted",
        Some(_) => {
            let meaning = if limit.purpose == TX_DEFAULT {
                "new transactions start unlimited until their own limit comes"
            } else {
                "taken to draw its connector's maximum"
            };
            tracing::warn!(
                identity,
                connector_id = limit.connector_id,
                purpose = limit.purpose,
                limit_amps = limit.limit_amps,
                answer,
                "the charger rejected its charging limit: {meaning}"
            );
            "rejected"
        }
        None => "failed",
    };
    metrics::counter!("cms_smart_charging_limits_total", "outcome" => outcome).increment(1);
    store
        .record_limit_answer(
            limit.charger_id,
            limit.connector_id,
            &limit.action_uuid,
            outcome,
            &at,
        )
        .await
}

/// What the round knows of each charger's words: its OCPP version and, for a 2.0.1 station,
/// the station's own id of each transaction (by charger and the store's transaction id).
struct Words {
    versions: HashMap<i64, OcppVersion>,
    station_transactions: HashMap<(i64, i64), String>,
}

impl Words {
    fn version(&self, charger_id: i64) -> OcppVersion {
        self.versions
            .get(&charger_id)
            .copied()
            .unwrap_or(OcppVersion::V16)
    }

    fn speaks_v201(&self, charger_id: i64) -> bool {
        self.version(charger_id) == OcppVersion::V201
    }

    /// The limit's SetChargingProfile in its charger's version; `None` for a 2.0.1 TxProfile
    /// whose transaction is no longer known.
    fn set_charging_profile(&self, limit: &SentLimit) -> Option<Value> {
        if !self.speaks_v201(limit.charger_id) {
            return Some(set_charging_profile(limit));
        }
        let transaction = match limit.transaction_id {
            Some(id) => Some(
                self.station_transactions
                    .get(&(limit.charger_id, id))?
                    .as_str(),
            ),
            None => None,
        };
        Some(profiles_v201::set_charging_profile(limit, transaction))
    }

    fn clear_charging_profile(&self, limit: &SentLimit) -> Value {
        if self.speaks_v201(limit.charger_id) {
            profiles_v201::clear_charging_profile(limit)
        } else {
            json!({"id": PROFILE_ID_BASE + limit.connector_id})
        }
    }
}

/// The SetChargingProfile of a limit: one period from the start, in amps per phase. Relative,
/// so that a charger whose clock is off applies it at once.
fn set_charging_profile(limit: &SentLimit) -> Value {
    let mut profile = json!({
        "chargingProfileId": PROFILE_ID_BASE + limit.connector_id,
        // One stack level per connector: OCPP 1.6 replaces a profile of the same stack level
        // and purpose, which some chargers read across connectors.
        "stackLevel": if limit.purpose == TX_DEFAULT { 0 } else { limit.connector_id },
        "chargingProfilePurpose": limit.purpose,
        "chargingProfileKind": "Relative",
        "chargingSchedule": {
            "chargingRateUnit": "A",
            "chargingSchedulePeriod": [{"startPeriod": 0, "limit": limit.limit_amps}],
        },
    });
    if let Some(transaction_id) = limit.transaction_id {
        profile["transactionId"] = json!(transaction_id);
    }
    json!({"connectorId": limit.connector_id, "csChargingProfiles": profile})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tx_profile_carries_its_transaction_and_a_default_profile_goes_to_connector_0() {
        let limit = SentLimit {
            charger_id: 1,
            connector_id: 2,
            limit_amps: 12.5,
            applied_amps: None,
            purpose: plan::TX_PROFILE.into(),
            transaction_id: Some(77),
            session: "s".into(),
            action_uuid: "u".into(),
            status: "pending".into(),
            sent_at: "t".into(),
            answered_at: None,
            measured_amps: None,
            paused_since: None,
        };
        assert_eq!(
            set_charging_profile(&limit),
            json!({"connectorId": 2, "csChargingProfiles": {
                "chargingProfileId": 1002, "stackLevel": 2, "transactionId": 77,
                "chargingProfilePurpose": "TxProfile", "chargingProfileKind": "Relative",
                "chargingSchedule": {"chargingRateUnit": "A",
                  "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 12.5}]}}})
        );
        let default = SentLimit {
            connector_id: 0,
            purpose: TX_DEFAULT.into(),
            transaction_id: None,
            limit_amps: 8.0,
            ..limit
        };
        let request = set_charging_profile(&default);
        assert_eq!(request["connectorId"], 0);
        assert_eq!(request["csChargingProfiles"]["chargingProfileId"], 1000);
        assert_eq!(request["csChargingProfiles"]["stackLevel"], 0);
        assert!(request["csChargingProfiles"].get("transactionId").is_none());
    }
}
