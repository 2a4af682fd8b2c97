//! The readings a priced transaction keeps stay bounded whatever order a charger sends them in.

use super::KEPT_DAYS;
use crate::sites::SiteChanges;
use crate::tariffs::NewTariff;
use crate::test_support::{charger_id, store_test};
use crate::{EnergyReading, StateChange, Store};
use chrono::{DateTime, TimeDelta, Utc};

/// The transaction's start: 2026-02-10 09:00 UTC.
fn started() -> DateTime<Utc> {
    "2026-02-10T09:00:00Z".parse().unwrap()
}

fn record_time(t: DateTime<Utc>) -> String {
    crate::format_record_time(t)
}

/// CP-1's site prices with a tariff; transaction 1 starts on connector 1 at [`started`].
async fn priced_transaction(store: &Store) -> i64 {
    let charger = charger_id(store, "CP-1").await;
    let (site, team): (i64, i64) = sqlx::query_as(
        "SELECT s.id, s.team_id FROM sites s JOIN chargers c ON c.site_id = s.id WHERE c.id = $1",
    )
    .bind(charger)
    .fetch_one(&store.pool)
    .await
    .unwrap();
    let tariff = NewTariff {
        name: "Standard".into(),
        currency: "EUR".into(),
        body: r#"{"currency":"EUR"}"#.into(),
    };
    let tariff = store.create_tariff(team, &tariff).await.unwrap();
    let changes = SiteChanges {
        tariff_id: Some(Some(tariff.id)),
        ..Default::default()
    };
    store.update_site(site, changes).await.unwrap();
    let at = record_time(started());
    store
        .apply(&[StateChange::TransactionStarted {
            identity: "CP-1".into(),
            ocpp_transaction_id: 1,
            connector_id: 1,
            id_tag: "TAG".into(),
            id_tag_status: Some("Accepted".into()),
            meter_start: 0,
            reservation_id: None,
            started_at: at.clone(),
            at,
        }])
        .await
        .unwrap();
    store.transaction_of("CP-1", 1).await.unwrap().unwrap().id
}

fn energy(at: DateTime<Utc>, wh: i64) -> StateChange {
    StateChange::TransactionEnergy {
        identity: "CP-1".into(),
        connector_id: 1,
        energy: EnergyReading {
            at: record_time(at),
            wh,
        },
    }
}

store_test!(readings_sent_backwards_keep_one_row_a_minute, |store| {
    let id = priced_transaction(&store).await;
    // 40,000 readings, each a millisecond older than the one before, from 09:30:00.000 down
    // to 09:29:20.001: two minutes of the reading's own clock.
    let newest = started() + TimeDelta::minutes(30);
    let readings: Vec<StateChange> = (0..40_000)
        .map(|i| energy(newest - TimeDelta::milliseconds(i), 20_000 - i / 10))
        .collect();
    // As the materialiser would hand them over: batch after batch.
    for batch in readings.chunks(4_000) {
        store.apply(batch).await.unwrap();
    }
    let kept = store.transaction_readings(&[id]).await.unwrap();
    assert!(kept.len() <= 2, "{} rows kept for two minutes", kept.len());
    // Each minute keeps its earliest reading, whatever the order they came in.
    let minutes: Vec<(&str, Option<&str>, Option<i64>)> = kept
        .iter()
        .map(|m| (m.minute.as_str(), m.energy_at.as_deref(), m.energy_wh))
        .collect();
    assert_eq!(
        minutes,
        [
            (
                "2026-02-10T09:29",
                Some("2026-02-10T09:29:20.001000Z"),
                Some(20_000 - 39_999 / 10)
            ),
            (
                "2026-02-10T09:30",
                Some("2026-02-10T09:30:00.000000Z"),
                Some(20_000)
            ),
        ]
    );
});

store_test!(
    a_transaction_keeps_a_row_a_minute_for_its_first_days_only,
    |store| {
        let id = priced_transaction(&store).await;
        let minute = |m: i64| started() + TimeDelta::minutes(m);
        // Out of order: 09:05:30, then 09:05:10 (the minute's earliest), then 09:05:50.
        let parked = |at: DateTime<Utc>, status: &str| StateChange::Status {
            identity: "CP-1".into(),
            connector_id: 1,
            status: status.into(),
            error: "NoError".into(),
            info: None,
            vendor_id: None,
            vendor_error_code: None,
            at: record_time(at),
        };
        let at = |m: i64, s: i64| minute(m) + TimeDelta::seconds(s);
        // Each in a batch of its own: the store's rows decide, not a batch's.
        for change in [
            energy(at(5, 30), 530),
            energy(at(5, 10), 510),
            energy(at(5, 50), 550),
            // Status changes: the minute's last stands from then on (one reported late, older
            // than the last, changes nothing).
            parked(at(5, 20), "SuspendedEV"),
            parked(at(5, 40), "Charging"),
            parked(at(5, 30), "SuspendedEV"),
            parked(at(6, 0), "Finishing"),
            // Past the days a session can be priced: not kept.
            energy(started() + TimeDelta::days(KEPT_DAYS), 9_999),
            // Before the start: not this transaction's.
            energy(started() - TimeDelta::seconds(1), 1),
        ] {
            store.apply(&[change]).await.unwrap();
        }
        let kept = store.transaction_readings(&[id]).await.unwrap();
        let rows: Vec<_> = kept
            .iter()
            .map(|m| {
                let at = |t: &Option<String>| t.as_deref().map(|t| t[14..19].to_string());
                (at(&m.energy_at), m.energy_wh, at(&m.parking_at), m.parking)
            })
            .collect();
        let text = |s: &str| Some(s.to_string());
        assert_eq!(
            rows,
            [
                (text("05:10"), Some(510), text("05:40"), Some(0)),
                (None, None, text("06:00"), Some(1)),
            ]
        );
    }
);
