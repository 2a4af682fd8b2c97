//! A transaction's signed readings are kept once, from its stop (1.6) or its Started and Ended
//! events (2.0.1), and read back in order.

use super::SignedValue;
use crate::station_events::{EventType, TransactionEvent};
use crate::test_support::{charger_id, store_test};
use crate::{StateChange, Store};

fn at(minute: u32) -> String {
    format!("2026-11-29T09:{minute:02}:00.000000Z")
}

fn signed(nature: &str, wh: i64) -> SignedValue {
    SignedValue {
        nature: nature.into(),
        plain_data: wh.to_string(),
        signed_data: format!("OCMF|{{\"RD\":[{{\"RV\":{wh}}}]}}|{{\"SD\":\"30{wh}\"}}"),
        encoding_method: "OCMF".into(),
        public_key: None,
    }
}

async fn transaction_id(store: &Store, column: &str, value: &str) -> i64 {
    let sql = format!("SELECT id FROM transactions WHERE CAST({column} AS TEXT) = $1");
    sqlx::query_scalar(&sql)
        .bind(value)
        .fetch_one(&store.pool)
        .await
        .unwrap()
}

store_test!(a_stops_signed_readings_are_kept_once, |store| {
    charger_id(&store, "CP-1").await;
    let start = |id: i64| StateChange::TransactionStarted {
        identity: "CP-1".into(),
        ocpp_transaction_id: id,
        connector_id: id,
        id_tag: "TAG".into(),
        id_tag_status: Some("Accepted".into()),
        meter_start: 0,
        reservation_id: None,
        started_at: at(0),
        at: at(0),
    };
    let stop = |id: i64, signed: Vec<SignedValue>| StateChange::TransactionStopped {
        identity: "CP-1".into(),
        ocpp_transaction_id: id,
        meter_stop: 4000,
        stopped_at: at(10),
        reason: "Local".into(),
        at: at(10),
        signed,
    };
    let values = vec![signed("Start", 0), signed("End", 4000)];
    let batch = [start(1), start(2), stop(1, values.clone()), stop(2, vec![])];
    store.apply(&batch).await.unwrap();
    // The bus replays the batch: nothing twice.
    store.apply(&batch[2..]).await.unwrap();
    let (one, two) = (
        transaction_id(&store, "ocpp_transaction_id", "1").await,
        transaction_id(&store, "ocpp_transaction_id", "2").await,
    );
    let kept = store.transaction_signed_values(&[one, two]).await.unwrap();
    assert_eq!(kept.get(&one), Some(&values));
    assert_eq!(kept.get(&two), None, "its station gave none");
});

store_test!(
    a_stations_started_and_ended_signed_readings_are_kept_in_order,
    |store| {
        charger_id(&store, "CP-1").await;
        let event = |seq_no: i64, event_type, signed: Vec<SignedValue>| TransactionEvent {
            identity: "CP-1".into(),
            station_transaction_id: "tx-201".into(),
            seq_no,
            event_type,
            evse_id: Some(1),
            id_tag: None,
            id_tag_status: None,
            reservation_id: None,
            stopped_reason: None,
            timestamp: at(seq_no as u32),
            energy: Vec::new(),
            latest: None,
            at: at(seq_no as u32),
            signed,
        };
        let keyed = |v: SignedValue| SignedValue {
            encoding_method: "EDL".into(),
            public_key: Some("04ABCD".into()),
            ..v
        };
        let (begin, end) = (keyed(signed("Start", 0)), keyed(signed("End", 3000)));
        // One batch with the end first, as a station offline a while may send them; then the
        // start again in a replay.
        let changes: Vec<StateChange> = [
            event(2, EventType::Ended, vec![end.clone()]),
            event(1, EventType::Updated, vec![signed("Intermediate", 1000)]),
            event(0, EventType::Started, vec![begin.clone()]),
        ]
        .into_iter()
        .map(|e| StateChange::TransactionEvent(Box::new(e)))
        .collect();
        store.apply(&changes).await.unwrap();
        store.apply(&changes[2..]).await.unwrap();
        let id = transaction_id(&store, "station_transaction_id", "tx-201").await;
        let kept = store.transaction_signed_values(&[id]).await.unwrap();
        assert_eq!(
            kept.get(&id),
            Some(&vec![begin, end]),
            "an Updated's are not read"
        );
    }
);
