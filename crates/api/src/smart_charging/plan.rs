//! One site's round: what it draws, what each charging connector gets, and which profiles to
//! send, forget or clear. Pure: the caller reads the inputs and carries the steps out.

use super::allocate::{Demand, Standing, Strategy, allocate};
use super::readings::currents;
use chrono::{DateTime, Utc};
use cms_store::format_record_time;
use cms_store::smart_charging::balancer::{
    BalancedCharger, BalancedSite, ChargingConnector, ConnectorComputation, LatestReading,
    SentLimit, SiteComputation,
};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// How the balancer paces what it sends.
#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    /// At most one raise per connector per this long (a cut goes at once).
    pub min_interval: Duration,
    /// How long after a charger rejected a profile it is tried again.
    pub retry_after: Duration,
    /// A connector's maximum when the charger never said (connectors.max_amperage).
    pub default_max_amps: f64,
}

/// The purposes of the profiles cms sends, and their ids: one TxDefaultProfile per charger
/// (connector 0), one TxProfile per connector, replaced in place by the next.
pub const TX_DEFAULT: &str = "TxDefaultProfile";
pub const TX_PROFILE: &str = "TxProfile";
pub const PROFILE_ID_BASE: i64 = 1000;

/// Something to do for one connector (0: the charger's default profile).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this limit (the stored row is the record of it).
    Send(SentLimit, String),
    /// The transaction the limit was for ended, and the profile with it: drop the record.
    Forget(SentLimit),
    /// Smart charging is off: clear the profile from the charger, then drop the record.
    Clear(SentLimit, String),
}

/// The round's outcome for one site.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub computation: SiteComputation,
    pub connectors: Vec<ConnectorComputation>,
    pub steps: Vec<Step>,
}

/// What a site's round reads.
pub struct Inputs<'a> {
    pub site: &'a BalancedSite,
    pub chargers: &'a [&'a BalancedCharger],
    pub charging: &'a [&'a ChargingConnector],
    pub readings: &'a HashMap<(i64, i64), &'a LatestReading>,
    pub limits: &'a HashMap<(i64, i64), &'a SentLimit>,
    /// Calls this balancer has in flight, by action uuid (a `pending` record not among them
    /// was left by a balancer before: its answer will never be seen, so it is sent again).
    pub in_flight: &'a HashSet<String>,
    pub now: DateTime<Utc>,
    pub pacing: Pacing,
}

/// The status's figures, free of floating-point dust (41.00000000000001).
fn hundredths(amps: f64) -> f64 {
    (amps * 100.0).round() / 100.0
}

fn since(at: &str, now: DateTime<Utc>) -> Duration {
    DateTime::parse_from_rfc3339(at)
        .map(|t| (now - t.with_timezone(&Utc)).to_std().unwrap_or_default())
        .unwrap_or(Duration::MAX)
}

/// One connector being balanced this round.
struct Charging<'a> {
    connector: &'a ChargingConnector,
    charger: &'a BalancedCharger,
    session: Option<&'a str>,
    max_amps: f64,
    /// Its limit, when it is for this transaction.
    held: Option<&'a SentLimit>,
    /// The same, when it went to this session (else it is to be sent again).
    current: Option<&'a SentLimit>,
    measured: Option<f64>,
}

pub fn plan(inputs: &Inputs<'_>) -> Plan {
    let site = inputs.site;
    let now = inputs.now;
    let now_text = format_record_time(now);
    let mut steps = Vec::new();
    let chargers: HashMap<i64, &BalancedCharger> =
        inputs.chargers.iter().map(|c| (c.charger_id, *c)).collect();
    let mut computation = SiteComputation {
        computed_at: now_text.clone(),
        ..SiteComputation::default()
    };
    let active = site.mode != "disabled" && site.grid_limit_amps.is_some();
    if !active {
        for limit in inputs.limits.values() {
            clear_or_wait(inputs, &chargers, limit, &mut steps);
        }
        return Plan {
            computation,
            connectors: Vec::new(),
            steps,
        };
    }
    let grid_limit = site.grid_limit_amps.unwrap_or(0.0);
    let timeout = Duration::from_secs(site.meter_timeout_seconds.max(1) as u64);

    // The transactions going on, each with what is known of it.
    let charging: Vec<Charging<'_>> = inputs
        .charging
        .iter()
        .filter_map(|connector| {
            let charger = chargers.get(&connector.charger_id)?;
            let session = charger.session.as_deref();
            let key = (connector.charger_id, connector.connector_id);
            let held = inputs
                .limits
                .get(&key)
                .copied()
                .filter(|l| l.transaction_id == Some(connector.transaction_id));
            let current = held.filter(|l| Some(l.session.as_str()) == session);
            let measured = inputs
                .readings
                .get(&key)
                .filter(|r| since(&r.updated_at, now) <= timeout.max(Duration::from_secs(60)))
                .and_then(|r| currents(&r.meter_value, "Outlet"))
                .and_then(|c| c.highest());
            Some(Charging {
                connector,
                charger,
                session,
                max_amps: connector
                    .max_amperage
                    .filter(|&a| a > 0)
                    .map_or(inputs.pacing.default_max_amps, |a| a as f64),
                held,
                current,
                measured,
            })
        })
        .collect();

    // Records of transactions no longer going on: their profiles ended with them.
    for limit in inputs.limits.values() {
        if limit.connector_id > 0 && !charging.iter().any(|c| c.held == Some(*limit)) {
            steps.push(Step::Forget((*limit).clone()));
        }
    }

    // What a connector is taken to draw: its own reading, else its limit, else the default
    // profile every transaction starts at; a charger that rejected its limit, its maximum.
    // A rejection stands until it is time to try again.
    let rejected = |c: &Charging<'_>| {
        c.held.is_some_and(|l| {
            l.status == "rejected" && since(&l.sent_at, now) < inputs.pacing.retry_after
        })
    };
    let draw = |c: &Charging<'_>| {
        if rejected(c) {
            return c.max_amps;
        }
        c.measured
            .or(c.held.map(|l| l.limit_amps))
            .unwrap_or(site.fail_safe_amps.min(c.max_amps))
    };
    // What the meter saw of the chargers. A connector with neither a reading nor a limit has
    // just started: the meter's reading likely predates it, and counting it would hide as much
    // of the site's own load. Left out, the base load can only come out high: the safe side.
    let drawn: f64 = charging
        .iter()
        .filter(|c| c.measured.is_some() || c.held.is_some())
        .map(draw)
        .sum();
    // Connectors the balancer cannot steer this round: offline, or rejecting its limits.
    let steered = |c: &Charging<'_>| c.session.is_some() && !rejected(c);
    let unsteered: f64 = charging.iter().filter(|c| !steered(c)).map(draw).sum();

    let meter = site
        .meter_charger_id
        .and_then(|id| inputs.readings.get(&(id, 0)))
        .and_then(|r| currents(&r.meter_value, "Inlet").map(|c| (c, *r)));
    let mut fail_safe = false;
    let available = if site.mode == "dynamic" {
        match &meter {
            Some((phases, reading)) if since(&reading.updated_at, now) <= timeout => {
                let grid = phases.highest().unwrap_or(0.0);
                let base = (grid - drawn).max(0.0);
                computation.meter_amps = Some(grid);
                computation.meter_phases = Some(phases.to_json());
                computation.meter_measured_at = Some(reading.updated_at.clone());
                computation.base_load_amps = Some(hundredths(base));
                computation.headroom_amps = Some(hundredths(grid_limit - grid));
                grid_limit - site.safety_margin_amps - base - unsteered
            }
            quiet => {
                if let Some((phases, reading)) = quiet {
                    computation.meter_amps = phases.highest();
                    computation.meter_phases = Some(phases.to_json());
                    computation.meter_measured_at = Some(reading.updated_at.clone());
                }
                fail_safe = true;
                0.0
            }
        }
    } else {
        grid_limit - site.safety_margin_amps - unsteered
    };
    computation.fail_safe_since = fail_safe.then(|| {
        site.fail_safe_since
            .clone()
            .unwrap_or_else(|| now_text.clone())
    });

    // The shares.
    let steerable: Vec<&Charging<'_>> = charging.iter().filter(|c| steered(c)).collect();
    let targets: Vec<f64> = if fail_safe {
        steerable
            .iter()
            .map(|c| site.fail_safe_amps.min(c.max_amps))
            .collect()
    } else {
        let demands: Vec<Demand> = steerable
            .iter()
            .map(|c| {
                let (standing, since) = match c.held {
                    Some(l) if l.limit_amps > 0.0 => {
                        (Standing::Served, c.connector.started_at.clone())
                    }
                    Some(l) => (
                        Standing::Paused,
                        l.paused_since.clone().unwrap_or_else(|| l.sent_at.clone()),
                    ),
                    None => (Standing::New, c.connector.started_at.clone()),
                };
                Demand {
                    priority: c.charger.priority,
                    standing,
                    since,
                    max_amps: c.max_amps,
                }
            })
            .collect();
        allocate(
            available,
            site.min_amps,
            Strategy::parse(&site.strategy),
            &demands,
        )
    };
    computation.available_amps = (!fail_safe).then_some(hundredths(available.max(0.0)));
    let allocated: f64 = targets.iter().sum::<f64>() + unsteered;
    computation.allocated_amps = Some(hundredths(allocated));
    if site.mode == "static" {
        computation.headroom_amps = Some(hundredths(grid_limit - allocated));
    }

    // When what the connectors hold adds up to more than is available, every cut is needed
    // however small: the hysteresis is for raises and for cuts made out of fairness.
    let held_total: f64 = steerable
        .iter()
        .map(|c| {
            c.current
                .map_or(site.fail_safe_amps.min(c.max_amps), |l| l.limit_amps)
        })
        .sum();
    let over = fail_safe || held_total > available + 0.05;
    // Cuts go first and at once; raises wait for the cuts in flight on the site to land.
    let site_busy = inputs
        .limits
        .values()
        .any(|l| l.status == "pending" && inputs.in_flight.contains(&l.action_uuid));
    let mut connectors = Vec::new();
    let mut raises = Vec::new();
    for (c, &target) in steerable.iter().zip(&targets) {
        let key = (c.connector.charger_id, c.connector.connector_id);
        let paused_since = (target == 0.0).then(|| {
            c.held
                .filter(|l| l.limit_amps == 0.0)
                .and_then(|l| l.paused_since.clone().or(Some(l.sent_at.clone())))
                .unwrap_or_else(|| now_text.clone())
        });
        connectors.push(ConnectorComputation {
            charger_id: key.0,
            connector_id: key.1,
            measured_amps: c.measured,
            paused_since: paused_since.clone(),
        });
        let Some(session) = c.session else { continue };
        let change = decide(inputs, c.current, target, over);
        let limit = SentLimit {
            charger_id: key.0,
            connector_id: key.1,
            limit_amps: target,
            purpose: TX_PROFILE.into(),
            transaction_id: Some(c.connector.transaction_id),
            session: session.into(),
            action_uuid: uuid::Uuid::new_v4().to_string(),
            status: "pending".into(),
            sent_at: now_text.clone(),
            answered_at: None,
            measured_amps: c.measured,
            paused_since,
        };
        match change {
            Change::None => {}
            Change::Cut => steps.push(Step::Send(limit, c.charger.identity.clone())),
            Change::Raise => raises.push(Step::Send(limit, c.charger.identity.clone())),
        }
    }
    if !site_busy && !steps.iter().any(|s| matches!(s, Step::Send(..))) {
        steps.extend(raises);
    }

    // Every online charger starts its transactions at the fail-safe level.
    for charger in inputs.chargers {
        let Some(session) = charger.session.as_deref() else {
            continue;
        };
        let held = inputs
            .limits
            .get(&(charger.charger_id, 0))
            .copied()
            .filter(|l| l.session == session);
        if default_profile_due(inputs, held, site.fail_safe_amps) {
            steps.push(Step::Send(
                SentLimit {
                    charger_id: charger.charger_id,
                    connector_id: 0,
                    limit_amps: site.fail_safe_amps,
                    purpose: TX_DEFAULT.into(),
                    transaction_id: None,
                    session: session.into(),
                    action_uuid: uuid::Uuid::new_v4().to_string(),
                    status: "pending".into(),
                    sent_at: now_text.clone(),
                    answered_at: None,
                    measured_amps: None,
                    paused_since: None,
                },
                charger.identity.clone(),
            ));
        }
    }
    Plan {
        computation,
        connectors,
        steps,
    }
}

enum Change {
    None,
    Cut,
    Raise,
}

/// Whether a connector's limit is to be sent now, and as a cut or a raise; `over`: the site's
/// connectors hold more than is available (or the fail-safe applies), so every cut counts.
fn decide(inputs: &Inputs<'_>, held: Option<&SentLimit>, target: f64, over: bool) -> Change {
    let Some(held) = held else {
        return Change::Cut;
    };
    let elapsed = since(&held.sent_at, inputs.now);
    match held.status.as_str() {
        "pending" if inputs.in_flight.contains(&held.action_uuid) => return Change::None,
        "pending" => return Change::Cut,
        "rejected" => {
            return if elapsed >= inputs.pacing.retry_after {
                Change::Cut
            } else {
                Change::None
            };
        }
        "failed" => {
            return if elapsed >= inputs.pacing.min_interval {
                Change::Cut
            } else {
                Change::None
            };
        }
        _ => {}
    }
    let last = held.limit_amps;
    let pause_changes = (target == 0.0) != (last == 0.0);
    let delta = (target - last).abs();
    let needed_cut = over && target < last && delta >= 0.1;
    if !pause_changes && !needed_cut && (delta < 1.0 || delta < 0.05 * last) {
        return Change::None;
    }
    if target < last {
        Change::Cut
    } else if elapsed >= inputs.pacing.min_interval {
        Change::Raise
    } else {
        Change::None
    }
}

/// Whether a charger's default profile is to be (re)sent.
fn default_profile_due(inputs: &Inputs<'_>, held: Option<&SentLimit>, amps: f64) -> bool {
    let Some(held) = held else { return true };
    let elapsed = since(&held.sent_at, inputs.now);
    match held.status.as_str() {
        "pending" => !inputs.in_flight.contains(&held.action_uuid),
        "rejected" => elapsed >= inputs.pacing.retry_after,
        "failed" => elapsed >= inputs.pacing.min_interval,
        _ => (held.limit_amps - amps).abs() >= 0.1,
    }
}

/// Smart charging is off: the profiles cms set are cleared from online chargers.
fn clear_or_wait(
    inputs: &Inputs<'_>,
    chargers: &HashMap<i64, &BalancedCharger>,
    limit: &SentLimit,
    steps: &mut Vec<Step>,
) {
    if inputs.in_flight.contains(&limit.action_uuid) {
        return;
    }
    let Some(charger) = chargers.get(&limit.charger_id) else {
        return;
    };
    let Some(session) = charger.session.as_deref() else {
        return;
    };
    if limit.status == "clearing" && since(&limit.sent_at, inputs.now) < inputs.pacing.retry_after {
        return;
    }
    let mut clearing = limit.clone();
    clearing.status = "clearing".into();
    clearing.session = session.into();
    clearing.action_uuid = uuid::Uuid::new_v4().to_string();
    clearing.sent_at = format_record_time(inputs.now);
    steps.push(Step::Clear(clearing, charger.identity.clone()));
}

#[cfg(test)]
mod tests;
