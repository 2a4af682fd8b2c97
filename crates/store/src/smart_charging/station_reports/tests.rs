//! A 2.0.1 station's smart-charging reports, kept and read back, on both stores.

use super::*;
use crate::StateChange;
use crate::test_support::{charger_id, store_test};

const T0: &str = "2026-11-24T12:00:00.000000Z";
const T1: &str = "2026-11-24T12:01:00.000000Z";

fn told(told: Told, at: &str) -> StateChange {
    StateChange::StationChargingReport(Box::new(StationReport {
        identity: "CS-201".into(),
        at: at.into(),
        told,
    }))
}

fn limit(evse_id: i64, source: &str, amps: f64) -> Told {
    Told::ChargingLimit {
        evse_id,
        source: source.into(),
        grid_critical: Some(true),
        limit_amps: Some(amps),
        charging_schedule: Some(format!(
            r#"[{{"id":1,"chargingRateUnit":"A","chargingSchedulePeriod":[{{"startPeriod":0,"limit":{amps}}}]}}]"#
        )),
    }
}

store_test!(
    external_limits_are_kept_by_evse_and_source_until_cleared,
    |store| {
        let charger = charger_id(&store, "CS-201").await;
        store
            .apply(&[
                told(limit(1, "EMS", 16.0), T0),
                told(limit(0, "SO", 40.0), T0),
                // A newer limit of the same source replaces the older.
                told(limit(1, "EMS", 10.0), T1),
            ])
            .await
            .unwrap();
        let reports = store.charging_reports(charger).await.unwrap();
        let held: Vec<(i64, &str, Option<f64>, &str)> = reports
            .limits
            .iter()
            .map(|l| {
                (
                    l.evse_id,
                    l.source.as_str(),
                    l.limit_amps,
                    l.reported_at.as_str(),
                )
            })
            .collect();
        assert_eq!(
            held,
            [(0, "SO", Some(40.0), T0), (1, "EMS", Some(10.0), T1)]
        );
        assert_eq!(reports.limits[1].grid_critical, Some(true));
        assert!(
            reports.limits[1]
                .charging_schedule
                .as_deref()
                .unwrap()
                .contains("10")
        );
        let cleared = Told::ChargingLimitCleared {
            evse_id: 1,
            source: "EMS".into(),
        };
        store.apply(&[told(cleared, T1)]).await.unwrap();
        let reports = store.charging_reports(charger).await.unwrap();
        assert_eq!(reports.limits.len(), 1);
        assert_eq!(reports.limits[0].source, "SO");
        // Another station's calls, or an unknown one's, touch nothing of this one.
        let unknown = StateChange::StationChargingReport(Box::new(StationReport {
            identity: "nobody".into(),
            at: T1.into(),
            told: limit(1, "EMS", 6.0),
        }));
        store.apply(&[unknown]).await.unwrap();
        assert_eq!(
            store.charging_reports(charger).await.unwrap().limits.len(),
            1
        );
    }
);

store_test!(
    an_evs_needs_and_schedule_are_kept_side_by_side_per_evse,
    |store| {
        let charger = charger_id(&store, "CS-201").await;
        let needs = Told::EvChargingNeeds {
            evse_id: 1,
            charging_needs: r#"{"requestedEnergyTransfer":"AC_three_phase"}"#.into(),
            max_schedule_tuples: None,
        };
        let schedule = Told::EvChargingSchedule {
            evse_id: 1,
            time_base: T0.into(),
            charging_schedule: r#"{"id":1,"chargingRateUnit":"A","chargingSchedulePeriod":[]}"#
                .into(),
        };
        store
            .apply(&[told(needs, T0), told(schedule, T1)])
            .await
            .unwrap();
        let reports = store.charging_reports(charger).await.unwrap();
        assert_eq!(reports.ev_needs.len(), 1);
        let ev = &reports.ev_needs[0];
        assert!(
            ev.charging_needs
                .as_deref()
                .unwrap()
                .contains("AC_three_phase")
        );
        assert_eq!(ev.needs_at.as_deref(), Some(T0));
        assert_eq!(ev.schedule_time_base.as_deref(), Some(T0));
        assert_eq!(ev.schedule_at.as_deref(), Some(T1));
        assert!(ev.charging_schedule.is_some());
    }
);

store_test!(
    the_profiles_of_the_latest_get_charging_profiles_replace_the_older_reports,
    |store| {
        let charger = charger_id(&store, "CS-201").await;
        let report = |request_id: i64, evse_id: i64, ids: &[i64]| Told::ChargingProfiles {
            request_id,
            evse_id,
            source: "CSO".into(),
            profiles: ids
                .iter()
                .map(|id| (*id, format!(r#"{{"id":{id}}}"#)))
                .collect(),
        };
        store
            .apply(&[told(report(1, 1, &[1001, 1000]), T0)])
            .await
            .unwrap();
        assert_eq!(
            store
                .charging_reports(charger)
                .await
                .unwrap()
                .profiles
                .len(),
            2
        );
        // Request 2's reports (two calls, `tbc`) replace request 1's.
        store
            .apply(&[
                told(report(2, 1, &[1001]), T1),
                told(report(2, 2, &[1002]), T1),
            ])
            .await
            .unwrap();
        let profiles = store.charging_reports(charger).await.unwrap().profiles;
        let held: Vec<(i64, i64, &str)> = profiles
            .iter()
            .map(|p| (p.request_id, p.evse_id, p.charging_profile.as_str()))
            .collect();
        assert_eq!(held, [(2, 1, r#"{"id":1001}"#), (2, 2, r#"{"id":1002}"#)]);
    }
);
