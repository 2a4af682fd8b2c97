//! Reservations' lives, on both backends.

use super::*;
use crate::test_support::{charger_id, store_test};

fn new(expires_at: &str) -> NewReservation {
    NewReservation {
        connector_id: 1,
        id_tag: "TAG-1".into(),
        parent_id_tag: Some("FLEET".into()),
        expires_at: expires_at.into(),
    }
}

const LATER: &str = "2099-01-01T00:00:00.000000Z";
const AT: &str = "2026-11-29T10:00:00.000000Z";

async fn status(store: &Store, charger: i64, id: i64) -> String {
    store
        .reservation(charger, id)
        .await
        .unwrap()
        .unwrap()
        .status
}

store_test!(a_reservation_is_answered_and_ends_once, |store| {
    let cp = charger_id(&store, "CP-1").await;
    let other = charger_id(&store, "CP-2").await;
    let made = store.add_reservation(cp, &new(LATER)).await.unwrap();
    assert_eq!(made.status, "pending");
    assert_eq!(made.parent_id_tag.as_deref(), Some("FLEET"));
    store.reservation_sent(made.id, "uuid-1").await.unwrap();
    store
        .reservation_answered(made.id, true, "Accepted")
        .await
        .unwrap();
    let shown = store.reservation(cp, made.id).await.unwrap().unwrap();
    assert_eq!(
        (shown.status.as_str(), shown.station_status.as_deref()),
        ("active", Some("Accepted"))
    );
    assert_eq!(shown.action_uuid.as_deref(), Some("uuid-1"));
    assert_eq!(
        store.reservation(other, made.id).await.unwrap(),
        None,
        "not the other's"
    );

    assert!(
        store
            .end_reservation(cp, made.id, "cancelled")
            .await
            .unwrap()
    );
    assert!(
        !store
            .end_reservation(cp, made.id, "cancelled")
            .await
            .unwrap(),
        "ended once"
    );
    // A late answer changes nothing of an ended reservation.
    store
        .reservation_answered(made.id, true, "Accepted")
        .await
        .unwrap();
    assert_eq!(status(&store, cp, made.id).await, "cancelled");

    let refused = store.add_reservation(cp, &new(LATER)).await.unwrap();
    store
        .reservation_answered(refused.id, false, "Occupied")
        .await
        .unwrap();
    let shown = store.reservation(cp, refused.id).await.unwrap().unwrap();
    assert_eq!(
        (shown.status.as_str(), shown.station_status.as_deref()),
        ("refused", Some("Occupied"))
    );
    assert!(shown.ended_at.is_some());

    let (page, total) = store.reservations_page(cp, 25, 0).await.unwrap();
    assert_eq!(total, 2);
    assert_eq!(page[0].id, refused.id, "newest first");
});

store_test!(reservations_expire_at_their_time, |store| {
    let cp = charger_id(&store, "CP-1").await;
    let soon = store
        .add_reservation(cp, &new("2026-11-29T09:00:00.000000Z"))
        .await
        .unwrap();
    let later = store.add_reservation(cp, &new(LATER)).await.unwrap();
    assert_eq!(store.expire_reservations(AT).await.unwrap(), 1);
    assert_eq!(status(&store, cp, soon.id).await, "expired");
    assert_eq!(status(&store, cp, later.id).await, "pending");
});

store_test!(
    a_transaction_uses_its_reservation_and_a_station_ends_one,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        let used_16 = store.add_reservation(cp, &new(LATER)).await.unwrap();
        let used_201 = store.add_reservation(cp, &new(LATER)).await.unwrap();
        let removed = store.add_reservation(cp, &new(LATER)).await.unwrap();
        for r in [&used_16, &used_201, &removed] {
            store
                .reservation_answered(r.id, true, "Accepted")
                .await
                .unwrap();
        }
        let start = StateChange::TransactionStarted {
            identity: "CP-1".into(),
            ocpp_transaction_id: 1,
            connector_id: 1,
            id_tag: "TAG-1".into(),
            id_tag_status: None,
            meter_start: 0,
            reservation_id: Some(used_16.id),
            started_at: AT.into(),
            at: AT.into(),
        };
        let event = crate::station_events::TransactionEvent {
            identity: "CP-1".into(),
            station_transaction_id: "TX-1".into(),
            seq_no: 0,
            event_type: crate::station_events::EventType::Started,
            evse_id: Some(1),
            id_tag: Some("TAG-1".into()),
            id_tag_status: None,
            reservation_id: Some(used_201.id),
            stopped_reason: None,
            timestamp: AT.into(),
            energy: Vec::new(),
            latest: None,
            at: AT.into(),
            signed: Vec::new(),
        };
        let ended = StateChange::ReservationEnded {
            identity: "CP-1".into(),
            reservation_id: removed.id,
            status: "removed".into(),
            at: AT.into(),
        };
        store
            .apply(&[start, StateChange::TransactionEvent(Box::new(event)), ended])
            .await
            .unwrap();
        assert_eq!(status(&store, cp, used_16.id).await, "used");
        assert_eq!(status(&store, cp, used_201.id).await, "used");
        assert_eq!(status(&store, cp, removed.id).await, "removed");
        // Ended: the sweep leaves it so.
        store.expire_reservations(LATER).await.unwrap();
        assert_eq!(status(&store, cp, removed.id).await, "removed");
    }
);
