//! What is known of each connector charging on a site: its limits, its reading, and what it
//! may be drawing, on the safe side.

use super::{Inputs, since};
use crate::control::smart_charging::readings::currents;
use cms_store::smart_charging::balancer::{BalancedCharger, ChargingConnector, SentLimit};
use std::collections::HashMap;
use std::time::Duration;

/// A connector's own reading older than this is not used.
const READING_FRESH: Duration = Duration::from_secs(60);

pub(in crate::control::smart_charging) struct Charging<'a> {
    pub connector: &'a ChargingConnector,
    pub charger: &'a BalancedCharger,
    /// Its charger's session while online.
    pub session: Option<&'a str>,
    pub max_amps: f64,
    /// Its limit, when it is for this transaction.
    pub held: Option<&'a SentLimit>,
    /// The same, when it went to this session (else it is to be sent again).
    pub current: Option<&'a SentLimit>,
    /// Its own latest `Current.Import`, when fresh.
    pub measured: Option<f64>,
    /// The most it may be drawing by what its charger was told and answered: the limit it
    /// accepted; while a newer one is unanswered, the higher of the two; its maximum when it
    /// refused; the charger's default profile (or its maximum) before any.
    pub assumed: f64,
    /// What it drew as the meter saw it, for the base load; `None` for one that just started.
    pub seen_drawing: Option<f64>,
    /// Whether the balancer can steer it this round: licensed (`smart`), online, not refusing,
    /// not stuck on an unanswered call. The others keep what they are assumed to draw.
    pub steerable: bool,
}

pub(super) fn charging<'a>(
    inputs: &Inputs<'a>,
    chargers: &HashMap<i64, &'a BalancedCharger>,
) -> Vec<Charging<'a>> {
    let now = inputs.now;
    let pacing = inputs.pacing;
    inputs
        .charging
        .iter()
        .filter_map(|&connector| {
            let charger = *chargers.get(&connector.charger_id)?;
            let session = charger.session.as_deref();
            let key = (connector.charger_id, connector.connector_id);
            let max_amps = connector
                .max_amperage
                .filter(|&a| a > 0)
                .map_or(pacing.default_max_amps, |a| a as f64)
                // An external limit on a 2.0.1 station's EVSE caps what it draws: the rest
                // goes to the others. Never below the minimum, which its share is made of.
                .min(
                    connector
                        .external_limit_amps
                        .map_or(f64::INFINITY, |l| l.max(inputs.site.min_amps)),
                );
            let held = inputs
                .limits
                .get(&key)
                .copied()
                .filter(|l| l.transaction_id == Some(connector.transaction_id));
            let current = held.filter(|l| Some(l.session.as_str()) == session);
            let measured = inputs
                .readings
                .get(&key)
                .filter(|r| since(&r.updated_at, now) <= READING_FRESH)
                .and_then(|r| currents(&r.meter_value, "Outlet"))
                .and_then(|c| c.highest());
            // Before any limit of its own, the charger's default profile holds it.
            let default_level = inputs
                .limits
                .get(&(connector.charger_id, 0))
                .filter(|l| l.status == "accepted" && Some(l.session.as_str()) == session)
                .map_or(max_amps, |l| l.limit_amps.min(max_amps));
            let assumed = match held {
                // Left out of balancing: it may draw its most.
                _ if !charger.smart_licensed => max_amps,
                None => default_level,
                Some(l) if l.status == "accepted" => l.limit_amps,
                Some(l) if l.status == "rejected" => max_amps,
                Some(l) => l
                    .limit_amps
                    .max(l.applied_amps.unwrap_or(default_level))
                    .min(max_amps),
            };
            let refusing = held.is_some_and(|l| {
                matches!(l.status.as_str(), "rejected" | "failed")
                    && since(&l.sent_at, now) < pacing.retry_after
            });
            let stuck = held.is_some_and(|l| {
                l.status == "pending"
                    && inputs.in_flight.contains(&l.action_uuid)
                    && since(&l.sent_at, now) > pacing.answer_grace
            });
            // What the meter saw it draw. A grid reading taken after the connector's last
            // answer saw it under that limit, whatever an older reading of its own says; one
            // taken before saw what its own reading of then says.
            let meter_after_answer = match (inputs.grid, held.and_then(|l| l.answered_at.as_ref()))
            {
                (Some(grid), Some(answered)) => grid.at > *answered,
                _ => true,
            };
            let seen_drawing = match (measured, held) {
                (Some(m), _) if meter_after_answer => Some(m.min(assumed)),
                (Some(m), _) => Some(m),
                (None, Some(_)) => Some(assumed),
                (None, None) => None,
            };
            Some(Charging {
                connector,
                charger,
                session,
                max_amps,
                held,
                current,
                measured,
                assumed,
                seen_drawing,
                steerable: charger.smart_licensed && session.is_some() && !refusing && !stuck,
            })
        })
        .collect()
}
