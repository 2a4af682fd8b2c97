//! Smart charging's station calls, as a station sends them, read into what the store keeps.

use super::*;
use serde_json::json;

const AT: &str = "2026-11-29T09:00:00.000000Z";

fn told(action: &str, payload: Value) -> Told {
    match change("CS-1", action, &payload.to_string(), AT) {
        Some(StateChange::StationChargingReport(report)) => {
            assert_eq!((report.identity.as_str(), report.at.as_str()), ("CS-1", AT));
            report.told
        }
        other => panic!("{action}: {other:?}"),
    }
}

#[test]
fn a_charging_limit_keeps_its_lowest_amps_and_its_schedules() {
    let schedules = json!([
        {"id": 1, "chargingRateUnit": "A", "chargingSchedulePeriod": [
            {"startPeriod": 0, "limit": 16.0}, {"startPeriod": 600, "limit": 10.5}]},
        {"id": 2, "chargingRateUnit": "W", "chargingSchedulePeriod": [
            {"startPeriod": 0, "limit": 2000.0}]}]);
    let limit = told(
        "NotifyChargingLimit",
        json!({"chargingLimit": {"chargingLimitSource": "EMS", "isGridCritical": true},
               "evseId": 2, "chargingSchedule": schedules}),
    );
    assert_eq!(
        limit,
        Told::ChargingLimit {
            evse_id: 2,
            source: "EMS".into(),
            grid_critical: Some(true),
            limit_amps: Some(10.5),
            charging_schedule: Some(schedules.to_string()),
        }
    );
    // The whole station's, without a schedule: kept, no amps for the balancer.
    let station = told(
        "NotifyChargingLimit",
        json!({"chargingLimit": {"chargingLimitSource": "SO"}}),
    );
    assert_eq!(
        station,
        Told::ChargingLimit {
            evse_id: 0,
            source: "SO".into(),
            grid_critical: None,
            limit_amps: None,
            charging_schedule: None,
        }
    );
    assert_eq!(
        told("ClearedChargingLimit", json!({"chargingLimitSource": "SO"})),
        Told::ChargingLimitCleared {
            evse_id: 0,
            source: "SO".into()
        }
    );
}

#[test]
fn an_evs_needs_schedule_and_the_reported_profiles_are_kept_as_told() {
    let needs = json!({"requestedEnergyTransfer": "AC_three_phase",
        "acChargingParameters": {"energyAmount": 20000, "evMinCurrent": 6, "evMaxCurrent": 32,
                                 "evMaxVoltage": 400}});
    assert_eq!(
        told(
            "NotifyEVChargingNeeds",
            json!({"evseId": 1, "maxScheduleTuples": 3, "chargingNeeds": needs})
        ),
        Told::EvChargingNeeds {
            evse_id: 1,
            charging_needs: needs.to_string(),
            max_schedule_tuples: Some(3),
        }
    );
    let schedule = json!({"id": 1, "chargingRateUnit": "A",
        "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 16}]});
    assert_eq!(
        told(
            "NotifyEVChargingSchedule",
            json!({"timeBase": "2026-11-29T09:00:00Z", "evseId": 1, "chargingSchedule": schedule})
        ),
        Told::EvChargingSchedule {
            evse_id: 1,
            time_base: AT.into(),
            charging_schedule: schedule.to_string(),
        }
    );
    let profile = json!({"id": 1001, "stackLevel": 1, "chargingProfilePurpose": "TxProfile"});
    assert_eq!(
        told(
            "ReportChargingProfiles",
            json!({"requestId": 7, "chargingLimitSource": "CSO", "tbc": false, "evseId": 1,
                   "chargingProfile": [profile]})
        ),
        Told::ChargingProfiles {
            request_id: 7,
            evse_id: 1,
            source: "CSO".into(),
            profiles: vec![(1001, profile.to_string())],
        }
    );
    // A payload that does not read changes nothing (the gateway checked it: not one of its).
    assert_eq!(change("CS-1", "NotifyEVChargingNeeds", "{}", AT), None);
    assert_eq!(change("CS-1", "Heartbeat", "{}", AT), None);
}
