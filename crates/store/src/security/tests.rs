use super::*;
use crate::StateChange;
use crate::test_support::{charger_id, store_test};

fn at(s: u32) -> String {
    format!("2026-11-21T10:{:02}:{:02}.000000Z", s / 60, s % 60)
}

fn event(identity: &str, event_type: &str, second: u32) -> StateChange {
    StateChange::SecurityEvent(SecurityEvent {
        identity: identity.into(),
        event_type: event_type.into(),
        occurred_at: at(second),
        tech_info: Some(format!("event {second}")),
        at: at(second),
    })
}

#[test]
fn the_critical_types_are_the_appendix_ones() {
    assert!(is_critical("TamperDetectionActivated"));
    assert!(is_critical("FirmwareUpdated"));
    assert!(!is_critical("InvalidMessages"));
    assert!(!is_critical("FailedToAuthenticateAtCsms"));
}

store_test!(a_stations_events_are_listed_newest_first, |store| {
    let charger = charger_id(&store, "CS-1").await;
    let other = charger_id(&store, "CS-2").await;
    store
        .apply(&[
            event("CS-1", "StartupOfTheDevice", 1),
            event("CS-2", "InvalidMessages", 2),
            event("CS-1", "InvalidMessages", 3),
            // A station nobody registered: dropped.
            event("CS-9", "ResetOrReboot", 4),
        ])
        .await
        .unwrap();
    let (rows, total) = store.security_events_page(charger, 10, 0).await.unwrap();
    assert_eq!(total, 2);
    let kept: Vec<_> = rows
        .iter()
        .map(|r| (r.event_type.as_str(), r.critical, r.tech_info.as_deref()))
        .collect();
    assert_eq!(
        kept,
        [
            ("InvalidMessages", 0, Some("event 3")),
            ("StartupOfTheDevice", 1, Some("event 1")),
        ]
    );
    assert_eq!(rows[0].occurred_at, at(3));
    assert_eq!(rows[0].received_at, at(3));
    let (rows, total) = store.security_events_page(other, 10, 0).await.unwrap();
    assert_eq!((rows.len(), total), (1, 1));
    // Pages.
    let (rows, total) = store.security_events_page(charger, 1, 1).await.unwrap();
    assert_eq!(total, 2);
    assert_eq!(rows[0].event_type, "StartupOfTheDevice");
});

store_test!(only_the_newest_events_of_a_station_are_kept, |store| {
    let charger = charger_id(&store, "CS-1").await;
    let changes: Vec<_> = (0..EVENTS_KEPT as u32 + 5)
        .map(|i| event("CS-1", "InvalidMessages", i))
        .collect();
    store.apply(&changes).await.unwrap();
    let (rows, total) = store.security_events_page(charger, 1, 0).await.unwrap();
    assert_eq!(total, EVENTS_KEPT);
    assert_eq!(rows[0].occurred_at, at(EVENTS_KEPT as u32 + 4));
    let (rows, _) = store
        .security_events_page(charger, 1, EVENTS_KEPT - 1)
        .await
        .unwrap();
    assert_eq!(rows[0].occurred_at, at(5), "the oldest five are gone");
});

fn signed(charger_id: i64, serial: &str, not_after: &str) -> SignedCertificate {
    SignedCertificate {
        charger_id,
        serial: serial.into(),
        not_after: not_after.into(),
        fingerprint: format!("{serial}-fp"),
        signed_at: "2026-11-21T10:00:00.000000Z".into(),
    }
}

store_test!(
    a_stations_newest_certificate_is_renewed_once_a_day,
    |store| {
        let one = charger_id(&store, "CS-1").await;
        let two = charger_id(&store, "CS-2").await;
        // CS-1's first certificate ends soon, but it has a newer one that does not.
        for certificate in [
            signed(one, "01", "2026-12-01T00:00:00.000000Z"),
            signed(two, "02", "2026-12-05T00:00:00.000000Z"),
            signed(one, "03", "2027-11-21T00:00:00.000000Z"),
        ] {
            store
                .insert_station_certificate(&certificate)
                .await
                .unwrap();
        }
        let (rows, total) = store.station_certificates_page(one, 10, 0).await.unwrap();
        assert_eq!(total, 2);
        assert_eq!(rows[0].serial, "03");
        assert_eq!(rows[1].fingerprint, "01-fp");
        let ending = store
            .station_certificates_ending("2026-12-21T00:00:00.000000Z")
            .await
            .unwrap();
        let ending: Vec<_> = ending.iter().map(|e| e.identity.as_str()).collect();
        assert_eq!(ending, ["CS-2"]);
        let ending = store
            .station_certificates_ending("2026-12-21T00:00:00.000000Z")
            .await
            .unwrap();
        let id = ending[0].certificate_id;
        let (now, day_ago) = ("2026-11-22T10:00:00.000000Z", "2026-11-21T10:00:00.000000Z");
        assert!(
            store
                .claim_certificate_renewal(id, now, day_ago)
                .await
                .unwrap()
        );
        assert!(
            !store
                .claim_certificate_renewal(id, now, day_ago)
                .await
                .unwrap()
        );
        // A day later it may be asked again.
        let (later, day_later_ago) = ("2026-11-23T10:00:01.000000Z", "2026-11-22T10:00:01.000000Z");
        assert!(
            store
                .claim_certificate_renewal(id, later, day_later_ago)
                .await
                .unwrap()
        );
        // Given back (the station was away): asked again at once.
        store.release_certificate_renewal(id, None).await.unwrap();
        assert!(
            store
                .claim_certificate_renewal(id, later, day_later_ago)
                .await
                .unwrap()
        );
        // The renewed certificate ends soon too: not asked for within the day of the last ask.
        let renewed = signed(two, "04", "2026-12-06T00:00:00.000000Z");
        store.insert_station_certificate(&renewed).await.unwrap();
        let ending = store
            .station_certificates_ending("2026-12-21T00:00:00.000000Z")
            .await
            .unwrap();
        let newest = ending
            .iter()
            .find(|e| e.identity == "CS-2")
            .unwrap()
            .certificate_id;
        assert_ne!(newest, id);
        let claim = |at, since| store.claim_certificate_renewal(newest, at, since);
        let (at, since) = ("2026-11-23T11:00:00.000000Z", "2026-11-22T11:00:00.000000Z");
        assert!(!claim(at, since).await.unwrap(), "asked within the day");
        let (at, since) = ("2026-11-24T11:00:00.000000Z", "2026-11-23T11:00:00.000000Z");
        assert!(claim(at, since).await.unwrap(), "a day later");
    }
);
