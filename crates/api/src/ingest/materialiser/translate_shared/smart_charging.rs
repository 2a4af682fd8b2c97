//! Smart charging's station calls (block K, 2.0.1 only): the external limits on an EVSE or the
//! station, the EV's needs and schedule, and the profiles a GetChargingProfiles reported, as
//! cms_store::smart_charging::station_reports keeps them.

use chrono::{DateTime, Utc};
use cms_store::smart_charging::station_reports::{StationReport, Told};
use cms_store::{StateChange, format_record_time};
use serde::Deserialize;
use serde_json::Value;

/// The change `action`'s payload makes; `None` when it does not read.
pub(super) fn change(identity: &str, action: &str, payload: &str, at: &str) -> Option<StateChange> {
    let told = match action {
        "NotifyChargingLimit" => {
            let call: NotifyChargingLimit = read(payload)?;
            let schedules = call.charging_schedule.unwrap_or_default();
            Told::ChargingLimit {
                evse_id: call.evse_id.unwrap_or(0),
                source: call.charging_limit.charging_limit_source,
                grid_critical: call.charging_limit.is_grid_critical,
                limit_amps: lowest_amps(&schedules),
                charging_schedule: (!schedules.is_empty())
                    .then(|| Value::Array(schedules).to_string()),
            }
        }
        "ClearedChargingLimit" => {
            let call: ClearedChargingLimit = read(payload)?;
            Told::ChargingLimitCleared {
                evse_id: call.evse_id.unwrap_or(0),
                source: call.charging_limit_source,
            }
        }
        "NotifyEVChargingNeeds" => {
            let call: NotifyEvChargingNeeds = read(payload)?;
            Told::EvChargingNeeds {
                evse_id: call.evse_id,
                charging_needs: call.charging_needs.to_string(),
                max_schedule_tuples: call.max_schedule_tuples,
            }
        }
        "NotifyEVChargingSchedule" => {
            let call: NotifyEvChargingSchedule = read(payload)?;
            Told::EvChargingSchedule {
                evse_id: call.evse_id,
                time_base: format_record_time(call.time_base),
                charging_schedule: call.charging_schedule.to_string(),
            }
        }
        "ReportChargingProfiles" => {
            let call: ReportChargingProfiles = read(payload)?;
            Told::ChargingProfiles {
                request_id: call.request_id,
                evse_id: call.evse_id,
                source: call.charging_limit_source,
                profiles: call
                    .charging_profile
                    .into_iter()
                    .map(|p| {
                        (
                            p.get("id").and_then(Value::as_i64).unwrap_or(0),
                            p.to_string(),
                        )
                    })
                    .collect(),
            }
        }
        _ => return None,
    };
    Some(StateChange::StationChargingReport(Box::new(
        StationReport {
            identity: identity.to_string(),
            at: at.to_string(),
            told,
        },
    )))
}

fn read<'a, T: Deserialize<'a>>(payload: &'a str) -> Option<T> {
    serde_json::from_str(payload)
        .inspect_err(|e| tracing::warn!(error = %e, "skipping an unreadable smart charging record"))
        .ok()
}

/// The lowest limit of the schedules given in amps (a limit in W is not the balancer's unit:
/// left out): on the safe side whichever period is in force.
fn lowest_amps(schedules: &[Value]) -> Option<f64> {
    schedules
        .iter()
        .filter(|s| s.get("chargingRateUnit").and_then(Value::as_str) == Some("A"))
        .filter_map(|s| s.get("chargingSchedulePeriod").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.get("limit").and_then(Value::as_f64))
        .reduce(f64::min)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyChargingLimit {
    charging_limit: ChargingLimit,
    evse_id: Option<i64>,
    charging_schedule: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChargingLimit {
    charging_limit_source: String,
    is_grid_critical: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClearedChargingLimit {
    charging_limit_source: String,
    evse_id: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyEvChargingNeeds {
    max_schedule_tuples: Option<i64>,
    charging_needs: Value,
    evse_id: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyEvChargingSchedule {
    time_base: DateTime<Utc>,
    charging_schedule: Value,
    evse_id: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReportChargingProfiles {
    request_id: i64,
    charging_limit_source: String,
    evse_id: i64,
    charging_profile: Vec<Value>,
}

#[cfg(test)]
mod tests;
