//! Whether a limit is sent now: hysteresis, pacing, retries, and clearing when turned off.

use super::connector::Charging;
use super::{Inputs, Step, since};
use cms_store::format_record_time;
use cms_store::smart_charging::balancer::{BalancedCharger, SentLimit};
use std::collections::HashMap;

pub(super) enum Change {
    None,
    /// To or below what the connector may draw now: at once.
    Cut,
    /// A cut out of fairness (the site is not over) within the pacing interval: later, and
    /// the raises it would make room for wait with it.
    PacedCut,
    /// Above it: after the cuts, and not sooner than the pacing allows.
    Raise,
}

/// Whether a connector's limit is to be sent now, and as a cut or a raise; `over`: the site's
/// connectors may draw more than is available (or the fail-safe applies), so every cut counts.
pub(super) fn decide(inputs: &Inputs<'_>, c: &Charging<'_>, target: f64, over: bool) -> Change {
    let resend = || {
        if target > c.assumed {
            Change::Raise
        } else {
            Change::Cut
        }
    };
    let Some(held) = c.current else {
        // Nothing for this session and transaction yet.
        return resend();
    };
    match held.status.as_str() {
        "pending" if inputs.in_flight.contains(&held.action_uuid) => return Change::None,
        "accepted" => {}
        // Left unanswered by a balancer before, or failed or refused and due again.
        _ => return resend(),
    }
    let last = held.limit_amps;
    let pause_changes = (target == 0.0) != (last == 0.0);
    let delta = (target - last).abs();
    let needed_cut = over && target < last && delta >= 0.1;
    if !pause_changes && !needed_cut && (delta < 1.0 || delta < 0.05 * last) {
        return Change::None;
    }
    let paced = since(&held.sent_at, inputs.now) < inputs.pacing.min_interval;
    match (target < last, paced) {
        (true, _) if over => Change::Cut,
        (true, false) => Change::Cut,
        (true, true) => Change::PacedCut,
        (false, false) => Change::Raise,
        (false, true) => Change::None,
    }
}

/// Whether a charger's default profile is to be (re)sent.
pub(super) fn default_profile_due(
    inputs: &Inputs<'_>,
    held: Option<&SentLimit>,
    amps: f64,
) -> bool {
    let Some(held) = held else { return true };
    match held.status.as_str() {
        "pending" => !inputs.in_flight.contains(&held.action_uuid),
        "rejected" | "failed" => since(&held.sent_at, inputs.now) >= inputs.pacing.retry_after,
        "accepted" => (held.limit_amps - amps).abs() >= 0.1,
        // A clear whose answer never came, the site turned on again: not known to hold it.
        _ => true,
    }
}

/// Smart charging is off: the profiles cms set are cleared from online chargers.
pub(super) fn clear_or_wait(
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
