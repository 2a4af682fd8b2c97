//! A 2.0.1 station's transactions and EVSE statuses, on both stores.

use super::*;
use crate::test_support::{charger_id, store_test};
use crate::transactions::TransactionRow;
use crate::{StateChange, Store};

fn at(minute: u32) -> String {
    format!("2026-02-10T09:{minute:02}:00.000000Z")
}

fn energy(minute: u32, wh: i64, context: ReadingContext) -> EventEnergy {
    EventEnergy {
        reading: EnergyReading { at: at(minute), wh },
        context,
    }
}

/// TransactionEvent `seq_no` of transaction "tx-1" of CP-1 on EVSE 1, at `minute`.
fn event(seq_no: i64, event_type: EventType, minute: u32) -> TransactionEvent {
    TransactionEvent {
        identity: "CP-1".into(),
        station_transaction_id: "tx-1".into(),
        seq_no,
        event_type,
        evse_id: Some(1),
        id_tag: None,
        id_tag_status: None,
        reservation_id: None,
        stopped_reason: None,
        timestamp: at(minute),
        energy: Vec::new(),
        latest: None,
        at: at(minute),
        signed: Vec::new(),
    }
}

/// A whole transaction as a station sends it: authorised at the start, a reading a few
/// minutes in, ended by the driver at the station.
fn session() -> Vec<TransactionEvent> {
    let started = TransactionEvent {
        id_tag: Some("04A2B3C4".into()),
        id_tag_status: Some("Accepted".into()),
        energy: vec![energy(0, 1_000, ReadingContext::Begin)],
        ..event(0, EventType::Started, 0)
    };
    let updated = TransactionEvent {
        evse_id: None,
        energy: vec![
            energy(5, 2_500, ReadingContext::Other),
            energy(6, 2_800, ReadingContext::Other),
        ],
        ..event(1, EventType::Updated, 6)
    };
    let ended = TransactionEvent {
        evse_id: None,
        stopped_reason: Some("EVDisconnected".into()),
        energy: vec![energy(10, 4_000, ReadingContext::End)],
        ..event(2, EventType::Ended, 10)
    };
    vec![started, updated, ended]
}

async fn apply(store: &Store, events: &[TransactionEvent]) {
    let changes: Vec<StateChange> = events
        .iter()
        .map(|e| StateChange::TransactionEvent(Box::new(e.clone())))
        .collect();
    store.apply(&changes).await.unwrap();
}

async fn transaction(store: &Store) -> TransactionRow {
    store
        .transaction_of_station("CP-1", "tx-1")
        .await
        .unwrap()
        .expect("the transaction is stored")
}

/// What the REST API shows of a transaction, and a summary of its time.
fn shown(t: &TransactionRow) -> impl PartialEq + std::fmt::Debug + use<> {
    (
        (t.connector_id, t.id_tag.clone(), t.id_tag_status.clone()),
        (t.meter_start, t.meter_stop),
        (
            t.started_at.clone(),
            t.stopped_at.clone(),
            t.stop_reason.clone(),
        ),
    )
}

store_test!(events_in_seq_no_order_make_the_transaction, |store| {
    let charger = charger_id(&store, "CP-1").await;
    apply(&store, &session()).await;
    let t = transaction(&store).await;
    assert_eq!(t.station_transaction_id.as_deref(), Some("tx-1"));
    assert_eq!(
        (
            t.connector_id,
            t.id_tag.as_str(),
            t.id_tag_status.as_deref()
        ),
        (1, "04A2B3C4", Some("Accepted"))
    );
    assert_eq!((t.meter_start, t.meter_stop), (1_000, Some(4_000)));
    assert_eq!(
        (t.started_at.as_str(), t.stopped_at.as_deref()),
        (at(0).as_str(), Some(at(10).as_str()))
    );
    assert_eq!(t.stop_reason.as_deref(), Some("EVDisconnected"));
    // Never a 1.6 transactionId, and listed as one of the charger's.
    assert!(t.ocpp_transaction_id < 0);
    let listed = store
        .transactions_of_charger(charger, &Default::default(), 10)
        .await
        .unwrap();
    assert_eq!(listed, std::slice::from_ref(&t));
    // Its EVSE is a connector of the charger.
    let connectors = store.connectors(charger).await.unwrap();
    assert_eq!(connectors.len(), 1);
    assert_eq!(t.charger_connector_id, Some(connectors[0].id));
    assert_eq!(
        (connectors[0].connector_id, connectors[0].evse_id),
        (1, Some(1))
    );
});

store_test!(
    events_in_any_order_or_twice_make_the_same_transaction,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let events = session();
        apply(&store, &events).await;
        let in_order = shown(&transaction(&store).await);
        let (started, updated, ended) = (&events[0], &events[1], &events[2]);
        let orders: [Vec<&TransactionEvent>; 4] = [
            // Ended before Started, in one batch and in another.
            vec![ended, updated, started],
            vec![updated, ended, started],
            vec![started, ended, updated],
            // Each delivered twice (the bus delivers at least once).
            vec![started, started, updated, ended, updated, started, ended],
        ];
        for (n, order) in orders.iter().enumerate() {
            let id = format!("tx-order-{n}");
            // One event a batch: the store sees each arrive after the others.
            for e in order {
                let e = TransactionEvent {
                    station_transaction_id: id.clone(),
                    ..(*e).clone()
                };
                apply(&store, &[e]).await;
            }
            let t = store
                .transaction_of_station("CP-1", &id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(shown(&t), in_order, "order {n}");
        }
        let transactions = store
            .transactions_of_charger(charger, &Default::default(), 10)
            .await
            .unwrap();
        assert_eq!(transactions.len(), 5, "one row per transaction, never two");
    }
);

store_test!(
    an_event_of_a_transaction_never_started_makes_its_row,
    |store| {
        charger_id(&store, "CP-1").await;
        // An Updated of a transaction whose Started was lost: a reading, no idToken.
        let updated = TransactionEvent {
            energy: vec![energy(5, 2_500, ReadingContext::Other)],
            ..event(3, EventType::Updated, 5)
        };
        apply(&store, &[updated]).await;
        let t = transaction(&store).await;
        assert_eq!(
            shown(&t),
            shown(&TransactionRow {
                connector_id: 1,
                id_tag: String::new(),
                id_tag_status: None,
                meter_start: 2_500,
                meter_stop: None,
                started_at: at(5),
                stopped_at: None,
                stop_reason: None,
                ..t.clone()
            })
        );
        // Its Started, sent offline, arrives after it: the start is the Started's.
        let started = TransactionEvent {
            id_tag: Some("04A2B3C4".into()),
            id_tag_status: Some("Accepted".into()),
            energy: vec![energy(0, 1_000, ReadingContext::Begin)],
            ..event(0, EventType::Started, 0)
        };
        apply(&store, &[started]).await;
        let t = transaction(&store).await;
        assert_eq!((t.id_tag.as_str(), t.meter_start), ("04A2B3C4", 1_000));
        assert_eq!(t.started_at, at(0));
        assert!(t.stopped_at.is_none());
    }
);

/// Puts CP-1's site on a tariff.
async fn priced_site(store: &Store, charger: i64) {
    let (site, team): (i64, i64) = sqlx::query_as(
        "SELECT s.id, s.team_id FROM sites s JOIN chargers c ON c.site_id = s.id WHERE c.id = $1",
    )
    .bind(charger)
    .fetch_one(&store.pool)
    .await
    .unwrap();
    let tariff = crate::tariffs::NewTariff {
        name: "Standard".into(),
        currency: "EUR".into(),
        body: r#"{"currency":"EUR"}"#.into(),
    };
    let tariff = store.create_tariff(team, &tariff).await.unwrap();
    let changes = crate::sites::SiteChanges {
        tariff_id: Some(Some(tariff.id)),
        ..Default::default()
    };
    store.update_site(site, changes).await.unwrap();
}

store_test!(
    events_sent_offline_after_the_end_still_count_for_the_price,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        priced_site(&store, charger).await;
        let events = session();
        // The station was offline: its Ended arrives first, then its Started.
        apply(&store, &[events[2].clone(), events[0].clone()]).await;
        let t = transaction(&store).await;
        assert!(t.tariff.is_some(), "priced with the site's tariff");
        store.set_transaction_cost(t.id, "{}").await.unwrap();
        // Its Updated, sent offline too, comes last of all.
        apply(&store, &events[1..2]).await;
        let t = transaction(&store).await;
        assert_eq!(t.cost, None, "priced again with the late readings");
        let minutes: Vec<(String, Option<i64>)> = store
            .transaction_readings(&[t.id])
            .await
            .unwrap()
            .into_iter()
            .map(|m| (m.minute, m.energy_wh))
            .collect();
        let minute = |m: u32| at(m)[..16].to_string();
        assert_eq!(
            minutes,
            [
                (minute(0), Some(1_000)),
                (minute(5), Some(2_500)),
                (minute(6), Some(2_800)),
                (minute(10), Some(4_000))
            ]
        );
    }
);

fn status(ocpp_status: &str, minute: u32) -> StateChange {
    StateChange::EvseStatus {
        identity: "CP-1".into(),
        evse_id: 1,
        connector_id: 2,
        ocpp_status: ocpp_status.into(),
        timestamp: at(minute),
        at: at(minute),
    }
}

async fn evse_status(store: &Store, charger: i64) -> (String, Option<String>) {
    let connectors = store.connectors(charger).await.unwrap();
    let evse = connectors.iter().find(|c| c.connector_id == 1).unwrap();
    assert_eq!((evse.evse_id, evse.evse_connector_id), (Some(1), Some(2)));
    (evse.status.clone(), evse.ocpp_status.clone())
}

store_test!(
    an_evse_shows_its_newest_status_and_whether_it_charges,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let shows = |status: &str, raw: &str| (status.to_string(), Some(raw.to_string()));
        store.apply(&[status("Available", 0)]).await.unwrap();
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Available", "Available")
        );
        // A car plugged in, no transaction yet.
        store.apply(&[status("Occupied", 1)]).await.unwrap();
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Preparing", "Occupied")
        );
        // A status older than the one held changes nothing.
        store.apply(&[status("Faulted", 0)]).await.unwrap();
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Preparing", "Occupied")
        );
        // The transaction starts: it charges; it ends: it stands occupied again.
        let events = session();
        apply(&store, &events[..1]).await;
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Charging", "Occupied")
        );
        apply(&store, &events[2..]).await;
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Preparing", "Occupied")
        );
        store.apply(&[status("Available", 12)]).await.unwrap();
        assert_eq!(
            evse_status(&store, charger).await,
            shows("Available", "Available")
        );
    }
);

store_test!(
    an_evse_that_starts_or_stops_charging_is_a_change_of_its_row,
    |store| {
        // An API replica holds a charger's connectors and reads them again only when their
        // versions (`connector_versions`: each row's updated_at) change.
        let charger = charger_id(&store, "CP-1").await;
        store.apply(&[status("Occupied", 1)]).await.unwrap();
        let mut versions = vec![store.connector_versions(charger).await.unwrap()];
        let events = session();
        apply(&store, &events[..1]).await;
        assert_eq!(evse_status(&store, charger).await.0, "Charging");
        versions.push(store.connector_versions(charger).await.unwrap());
        apply(&store, &events[2..]).await;
        assert_eq!(evse_status(&store, charger).await.0, "Preparing");
        versions.push(store.connector_versions(charger).await.unwrap());
        assert!(
            versions[0] != versions[1] && versions[1] != versions[2],
            "a held list would show the status before: {versions:?}"
        );
        // An event that changes nothing of the EVSE leaves it as it is.
        apply(&store, &events[1..2]).await;
        assert_eq!(
            store.connector_versions(charger).await.unwrap(),
            versions[2]
        );
    }
);

/// Two transactions' events of `identity`, as a batch under load holds them: interleaved,
/// several of each.
fn two_sessions(identity: &str) -> Vec<TransactionEvent> {
    let mut events = Vec::new();
    for (tx, evse, base) in [("tx-1", 1, 1_000), ("tx-2", 2, 50_000)] {
        for seq_no in 0..6 {
            let event_type = match seq_no {
                0 => EventType::Started,
                5 => EventType::Ended,
                _ => EventType::Updated,
            };
            let minute = seq_no as u32 * 2;
            let wh = base + seq_no * 300;
            let sampled = format!(
                r#"[{{"timestamp":"{}","sampledValue":[{{"value":"{wh}"}}]}}]"#,
                at(minute)
            );
            events.push(TransactionEvent {
                identity: identity.into(),
                station_transaction_id: tx.into(),
                evse_id: Some(evse),
                energy: vec![energy(minute, wh, ReadingContext::Other)],
                latest: Some((sampled, at(minute))),
                ..event(seq_no, event_type, minute)
            });
        }
    }
    // tx-1's and tx-2's in turn, as their stations sent them.
    let (one, two) = events.split_at(6);
    one.iter()
        .zip(two)
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect()
}

store_test!(
    a_batch_of_many_events_of_each_transaction_makes_what_one_by_one_makes,
    |store| {
        charger_id(&store, "CP-1").await;
        charger_id(&store, "CP-2").await;
        // CP-1's in one batch, as the materialiser hands them under load; CP-2's (the same
        // events) in one batch each.
        apply(&store, &two_sessions("CP-1")).await;
        for e in &two_sessions("CP-2") {
            apply(&store, std::slice::from_ref(e)).await;
        }
        for tx in ["tx-1", "tx-2"] {
            let of = async |identity| {
                let found = store.transaction_of_station(identity, tx).await.unwrap();
                found.expect("stored")
            };
            let (batched, alone) = (of("CP-1").await, of("CP-2").await);
            assert_eq!(shown(&batched), shown(&alone), "{tx}");
            assert_eq!(batched.meter_stop, alone.meter_stop, "{tx}");
        }
        let values = store.latest_meter_values().await.unwrap();
        let of = |identity: &str| {
            let mut mine: Vec<_> = (values.iter())
                .filter(|v| v.identity == identity)
                .map(|v| (v.connector_id, v.meter_value.clone(), v.measured_at.clone()))
                .collect();
            mine.sort();
            mine
        };
        let batched = of("CP-1");
        assert_eq!(batched, of("CP-2"));
        assert_eq!(batched.len(), 2, "each EVSE's newest reading: {batched:?}");
        assert_eq!(batched[0].2, at(10));
    }
);
