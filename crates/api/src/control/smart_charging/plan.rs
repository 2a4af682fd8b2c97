//! One site's round: what it draws, what each charging connector gets, and which profiles to
//! send, forget or clear. Pure: the caller reads the inputs and carries the steps out.

mod connector;
mod decide;

use super::allocate::{Demand, Standing, Strategy, allocate};
use super::readings::Currents;
use chrono::{DateTime, Utc};
use cms_store::format_record_time;
use cms_store::smart_charging::SmartChargingMode;
use cms_store::smart_charging::balancer::{
    BalancedCharger, BalancedSite, ChargingConnector, ConnectorComputation, LatestReading,
    SentLimit, SiteComputation,
};
use connector::Charging;
use decide::{Change, clear_or_wait, decide, default_profile_due};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// How the balancer paces what it sends.
#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    /// At most one raise per connector per this long (a cut goes at once).
    pub min_interval: Duration,
    /// How long after a charger rejected a profile, or failed to answer, it is tried again.
    pub retry_after: Duration,
    /// How long a call may stay unanswered before its connector is taken to draw the most it
    /// may, and no longer counted on to follow.
    pub answer_grace: Duration,
    /// A connector's maximum when the charger never said (connectors.max_amperage).
    pub default_max_amps: f64,
}

/// The purposes of the profiles cms sends, and their ids: one TxDefaultProfile per charger
/// (connector 0), one TxProfile per connector, replaced in place by the next.
pub const TX_DEFAULT: &str = "TxDefaultProfile";
pub const TX_PROFILE: &str = "TxProfile";
pub const PROFILE_ID_BASE: i64 = 1000;

/// A connector paused or new is admitted only with this much to spare beyond the minimum, so
/// that a site on the edge does not pause and resume a connector every round.
const ADMISSION_MARGIN: f64 = 1.0;

/// Something to do for one connector (0: the charger's default profile).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this limit (the stored row is the record of it) to the charger named.
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
    /// Cuts first, then raises, then the rest.
    pub steps: Vec<Step>,
}

/// The grid's current as the site's CT meter last reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct GridReading {
    pub phases: Currents,
    /// When it was measured: the earlier of the meter's sample time and the store's, so that
    /// neither a replayed backlog nor a meter's clock running ahead passes an old reading off
    /// as fresh.
    pub at: String,
}

/// What a site's round reads.
pub struct Inputs<'a> {
    pub site: &'a BalancedSite,
    pub chargers: &'a [&'a BalancedCharger],
    pub charging: &'a [&'a ChargingConnector],
    pub readings: &'a HashMap<(i64, i64), &'a LatestReading>,
    pub grid: Option<&'a GridReading>,
    pub limits: &'a HashMap<(i64, i64), &'a SentLimit>,
    /// Calls this balancer has in flight, by action uuid (a `pending` record not among them
    /// was left by a balancer before: its answer will never be seen, so it is sent again).
    pub in_flight: &'a HashSet<String>,
    pub now: DateTime<Utc>,
    pub pacing: Pacing,
}

pub(super) fn since(at: &str, now: DateTime<Utc>) -> Duration {
    DateTime::parse_from_rfc3339(at)
        .map(|t| (now - t.with_timezone(&Utc)).to_std().unwrap_or_default())
        .unwrap_or(Duration::MAX)
}

/// The status's figures, free of floating-point dust (41.00000000000001).
fn hundredths(amps: f64) -> f64 {
    (amps * 100.0).round() / 100.0
}

pub fn plan(inputs: &Inputs<'_>) -> Plan {
    let site = inputs.site;
    let now_text = format_record_time(inputs.now);
    let mut computation = SiteComputation {
        computed_at: now_text.clone(),
        ..SiteComputation::default()
    };
    let chargers: HashMap<i64, &BalancedCharger> =
        inputs.chargers.iter().map(|c| (c.charger_id, *c)).collect();
    if site.mode == SmartChargingMode::Disabled || site.grid_limit_amps.is_none() {
        let mut steps = Vec::new();
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
    let charging = connector::charging(inputs, &chargers);
    let mut forgets = Vec::new();
    // Records of transactions no longer going on: their profiles ended with them.
    for limit in inputs.limits.values() {
        if limit.connector_id > 0 && !charging.iter().any(|c| c.held == Some(*limit)) {
            forgets.push(Step::Forget((*limit).clone()));
        }
    }

    // What the connectors the balancer cannot steer this round take, off the top.
    let unsteered: f64 = charging
        .iter()
        .filter(|c| !c.steerable)
        .map(|c| c.assumed)
        .sum();
    let timeout = Duration::from_secs(site.meter_timeout_seconds.max(1) as u64);
    let mut fail_safe = false;
    let available = if site.mode == SmartChargingMode::Dynamic {
        let grid = inputs.grid;
        if let Some(reading) = grid {
            computation.meter_amps = reading.phases.highest();
            computation.meter_phases = Some(reading.phases.to_json());
            computation.meter_measured_at = Some(reading.at.clone());
        }
        match grid {
            Some(reading) if since(&reading.at, inputs.now) <= timeout => {
                let grid = reading.phases.highest().unwrap_or(0.0);
                // What the meter saw of the chargers (new connectors left out: the reading
                // likely predates them, and counting them would hide the site's own load).
                let drawn: f64 = charging.iter().filter_map(|c| c.seen_drawing).sum();
                let base = (grid - drawn).max(0.0);
                computation.base_load_amps = Some(hundredths(base));
                computation.headroom_amps = Some(hundredths(grid_limit - grid));
                grid_limit - site.safety_margin_amps - base - unsteered
            }
            _ => {
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

    let steerable: Vec<&Charging<'_>> = charging.iter().filter(|c| c.steerable).collect();
    let targets = if fail_safe {
        fail_safe_shares(site, &steerable)
    } else {
        allocate(
            available,
            site.min_amps,
            Strategy::parse(&site.strategy),
            &demands(&steerable),
        )
    };
    computation.available_amps = (!fail_safe).then_some(hundredths(available.max(0.0)));
    let allocated: f64 = targets.iter().sum::<f64>() + unsteered;
    computation.allocated_amps = Some(hundredths(allocated));
    if site.mode == SmartChargingMode::Static {
        computation.headroom_amps = Some(hundredths(grid_limit - allocated));
    }

    // When what the connectors may draw adds up to more than is available, every cut is needed
    // however small: the hysteresis is for raises and for cuts made out of fairness.
    let may_draw: f64 = steerable.iter().map(|c| c.assumed).sum();
    let over = fail_safe || may_draw > available + 0.05;
    let mut cuts = Vec::new();
    let mut raises = Vec::new();
    let mut paced_cuts = false;
    let mut connectors = Vec::new();
    for (c, &target) in steerable.iter().zip(&targets) {
        let paused_since = (target == 0.0).then(|| {
            c.held
                .filter(|l| l.limit_amps == 0.0)
                .and_then(|l| l.paused_since.clone().or(Some(l.sent_at.clone())))
                .unwrap_or_else(|| now_text.clone())
        });
        connectors.push(ConnectorComputation {
            charger_id: c.connector.charger_id,
            connector_id: c.connector.connector_id,
            measured_amps: c.measured,
            paused_since: paused_since.clone(),
        });
        let Some(session) = c.session else { continue };
        let change = decide(inputs, c, target, over);
        match change {
            Change::None => continue,
            Change::PacedCut => {
                paced_cuts = true;
                continue;
            }
            Change::Cut | Change::Raise => {}
        }
        let limit = SentLimit {
            charger_id: c.connector.charger_id,
            connector_id: c.connector.connector_id,
            limit_amps: target,
            applied_amps: c.held.and_then(|l| l.applied_amps),
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
        let step = Step::Send(limit, c.charger.identity.clone());
        match change {
            Change::Cut => cuts.push(step),
            _ => raises.push(step),
        }
    }
    // Raises wait for the cuts: sent this round, or in flight (current moves from one
    // connector to another without passing over the limit on the way).
    let cutting = inputs.limits.values().any(|l| {
        l.purpose == TX_PROFILE
            && l.status == "pending"
            && inputs.in_flight.contains(&l.action_uuid)
            && l.applied_amps.is_none_or(|applied| l.limit_amps < applied)
    });
    let mut steps = cuts;
    if steps.is_empty() && !cutting && !paced_cuts {
        steps.extend(raises);
    }
    steps.extend(default_profiles(inputs, &now_text));
    steps.extend(forgets);
    Plan {
        computation,
        connectors,
        steps,
    }
}

/// Where each connector stands before the allocation.
fn demands(steerable: &[&Charging<'_>]) -> Vec<Demand> {
    steerable
        .iter()
        .map(|c| {
            let (standing, since) = match c.held {
                Some(l) if l.limit_amps > 0.0 => (Standing::Served, c.connector.started_at.clone()),
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
                // Paused or new: admitted only with some to spare.
                margin: if standing == Standing::Served {
                    0.0
                } else {
                    ADMISSION_MARGIN
                },
            }
        })
        .collect()
}

/// The fail-safe current is per charger: a charger's charging connectors share it.
fn fail_safe_shares(site: &BalancedSite, steerable: &[&Charging<'_>]) -> Vec<f64> {
    let mut targets = vec![0.0; steerable.len()];
    let mut by_charger: HashMap<i64, Vec<usize>> = HashMap::new();
    for (i, c) in steerable.iter().enumerate() {
        by_charger.entry(c.charger.charger_id).or_default().push(i);
    }
    for indexes in by_charger.values() {
        let own: Vec<&Charging<'_>> = indexes.iter().map(|&i| steerable[i]).collect();
        let shares = allocate(
            site.fail_safe_amps,
            site.min_amps,
            Strategy::Equal,
            &demands(&own),
        );
        for (&i, share) in indexes.iter().zip(shares) {
            targets[i] = share;
        }
    }
    targets
}

/// Every online charger holds a default profile at the fail-safe level: what a new transaction
/// starts at until its share comes.
fn default_profiles(inputs: &Inputs<'_>, now_text: &str) -> Vec<Step> {
    let site = inputs.site;
    let mut steps = Vec::new();
    for charger in inputs.chargers {
        let Some(session) = charger
            .session
            .as_deref()
            .filter(|_| charger.smart_licensed)
        else {
            continue;
        };
        let held = inputs
            .limits
            .get(&(charger.charger_id, 0))
            .copied()
            .filter(|l| l.session == session);
        if default_profile_due(inputs, held, site.fail_safe_amps) {
            let limit = SentLimit {
                charger_id: charger.charger_id,
                connector_id: 0,
                limit_amps: site.fail_safe_amps,
                applied_amps: held.and_then(|l| l.applied_amps),
                purpose: TX_DEFAULT.into(),
                transaction_id: None,
                session: session.into(),
                action_uuid: uuid::Uuid::new_v4().to_string(),
                status: "pending".into(),
                sent_at: now_text.to_string(),
                answered_at: None,
                measured_amps: None,
                paused_since: None,
            };
            steps.push(Step::Send(limit, charger.identity.clone()));
        }
    }
    steps
}

#[cfg(test)]
mod tests;
