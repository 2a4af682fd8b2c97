use super::*;
use crate::test_support::{charger_id, store_test};

async fn exec(store: &Store, sql: &str, charger: i64) {
    sqlx::query(sql)
        .bind(charger)
        .execute(&store.pool)
        .await
        .unwrap();
}

/// A charger on a site in static smart charging, online, with a transaction charging on
/// connector 1; returns the charger's and the site's ids.
async fn charging_site(store: &Store) -> (i64, i64) {
    let charger = charger_id(store, "cp-1").await;
    let site: i64 = sqlx::query_scalar("SELECT site_id FROM chargers WHERE id = $1")
        .bind(charger)
        .fetch_one(&store.pool)
        .await
        .unwrap();
    exec(
        store,
        "UPDATE chargers SET connection_status = 'online', session = 's1' WHERE id = $1",
        charger,
    )
    .await;
    exec(store, "UPDATE sites SET smart_charging = 'static' WHERE id = (SELECT site_id FROM chargers WHERE id = $1)", charger).await;
    exec(
        store,
        "INSERT INTO site_smart_charging (site_id, grid_limit_amps, updated_at)
         SELECT site_id, 63.5, 'now' FROM chargers WHERE id = $1",
        charger,
    )
    .await;
    exec(
        store,
        "INSERT INTO connectors (charger_id, connector_id, status, max_amperage, created_at, updated_at)
         VALUES ($1, 1, 'Charging', 16, 'now', 'now')",
        charger,
    )
    .await;
    for (tx, stopped) in [(7, "NULL"), (6, "'2026-01-01T00:00:00.000000Z'")] {
        exec(
            store,
            &format!(
                "INSERT INTO transactions (charger_id, connector_id, ocpp_transaction_id, id_tag,
                   meter_start, started_at, stopped_at, created_at, updated_at)
                 VALUES ($1, 1, {tx}, 'tag', 0, '2026-01-01T00:00:00.000000Z', {stopped}, 'now', 'now')"
            ),
            charger,
        )
        .await;
    }
    (charger, site)
}

async fn lease_until(store: &Store) -> String {
    sqlx::query_scalar("SELECT lease_until FROM site_smart_charging")
        .fetch_one(&store.pool)
        .await
        .unwrap()
}

fn limit(charger_id: i64, uuid: &str) -> SentLimit {
    SentLimit {
        charger_id,
        connector_id: 1,
        limit_amps: 12.5,
        purpose: "TxProfile".into(),
        transaction_id: Some(7),
        session: "s1".into(),
        action_uuid: uuid.into(),
        status: "pending".into(),
        sent_at: "2026-11-24T12:00:00.000000Z".into(),
        answered_at: None,
        measured_amps: None,
        paused_since: None,
        applied_amps: None,
    }
}

const T0: &str = "2026-11-24T12:00:00.000000Z";
const T5: &str = "2026-11-24T12:00:05.000000Z";
const T10: &str = "2026-11-24T12:00:10.000000Z";
const T11: &str = "2026-11-24T12:00:11.000000Z";
const T21: &str = "2026-11-24T12:00:21.000000Z";

store_test!(
    one_balancer_holds_a_site_until_its_lease_runs_out,
    |store| {
        let (charger, site) = charging_site(&store).await;
        let held = store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!((held[0].site_id, held[0].mode.as_str()), (site, "static"));
        assert_eq!(held[0].grid_limit_amps, Some(63.5));
        assert_eq!(held[0].min_amps, 6.0);
        assert!(
            store
                .claim_smart_charging_sites(
                    "b",
                    T5,
                    "2026-11-24T12:00:15.000000Z",
                    "2026-11-24T12:00:15.000000Z"
                )
                .await
                .unwrap()
                .is_empty()
        );
        // Renewed by its holder, then let lapse: the other takes it.
        assert_eq!(
            store
                .claim_smart_charging_sites("a", T5, T10, T10)
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            store
                .claim_smart_charging_sites("b", T11, T21, T21)
                .await
                .unwrap()
                .len(),
            1
        );
        // The one that lost the site records (and so sends) nothing more.
        assert!(
            !store
                .record_limit("a", T11, &limit(charger, "from-a"))
                .await
                .unwrap()
        );
        assert!(
            store
                .record_limit("b", T11, &limit(charger, "from-b"))
                .await
                .unwrap()
        );
        let limits = store.sent_limits("b").await.unwrap();
        assert_eq!(limits, vec![limit(charger, "from-b")]);
        // Numbers after nulls in the same statement (PostgreSQL types them from the first).
        let mut default = limit(charger, "default");
        default.connector_id = 0;
        default.transaction_id = None;
        assert!(store.record_limit("b", T11, &default).await.unwrap());
        let mut measured = limit(charger, "measured");
        measured.measured_amps = Some(9.5);
        measured.applied_amps = Some(12.5);
        assert!(store.record_limit("b", T11, &measured).await.unwrap());
        let limits = store.sent_limits("b").await.unwrap();
        assert_eq!(limits, vec![default, measured]);
        assert!(store.sent_limits("a").await.unwrap().is_empty());
        // Held until T21, it is renewed only once it would run out before the time asked.
        let later = "2026-11-24T12:00:30.000000Z";
        store
            .claim_smart_charging_sites("b", T11, T10, later)
            .await
            .unwrap();
        assert_eq!(
            lease_until(&store).await,
            T21,
            "not renewed: it runs past T10"
        );
        store
            .claim_smart_charging_sites("b", T11, "2026-11-24T12:00:25.000000Z", later)
            .await
            .unwrap();
        assert_eq!(lease_until(&store).await, later, "renewed");
        // Released, it is the first comer's at once.
        store.release_smart_charging_sites("b").await.unwrap();
        assert_eq!(
            store
                .claim_smart_charging_sites("a", T11, T21, T21)
                .await
                .unwrap()
                .len(),
            1
        );
    }
);

store_test!(
    the_inputs_are_the_held_sites_chargers_transactions_and_limits,
    |store| {
        let (charger, _) = charging_site(&store).await;
        store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap();
        let chargers = store.balanced_chargers("a").await.unwrap();
        assert_eq!(chargers.len(), 1);
        assert_eq!(chargers[0].session.as_deref(), Some("s1"));
        assert_eq!(chargers[0].priority, 0);
        let charging = store.charging_connectors("a").await.unwrap();
        assert_eq!(charging.len(), 1, "the stopped transaction is not charging");
        assert_eq!(charging[0].transaction_id, 7);
        assert_eq!(charging[0].max_amperage, Some(16));
        assert!(store.balanced_readings("a").await.unwrap().is_empty());
        assert!(store.charging_connectors("b").await.unwrap().is_empty());

        // An answer is recorded against the limit it answers, not a later one.
        store
            .record_limit("a", T0, &limit(charger, "first"))
            .await
            .unwrap();
        store
            .record_limit_answer(charger, 1, "older", "rejected", T5)
            .await
            .unwrap();
        store
            .record_limit_answer(charger, 1, "first", "accepted", T5)
            .await
            .unwrap();
        let held = &store.sent_limits("a").await.unwrap()[0];
        assert_eq!(
            (held.status.as_str(), held.answered_at.as_deref()),
            ("accepted", Some(T5))
        );
        assert_eq!(
            held.applied_amps,
            Some(12.5),
            "accepted: applied from now on"
        );
        // A newer limit that fails leaves the accepted one as what the charger holds.
        let mut newer = limit(charger, "second");
        newer.limit_amps = 6.0;
        newer.applied_amps = held.applied_amps;
        store.record_limit("a", T0, &newer).await.unwrap();
        store
            .record_limit_answer(charger, 1, "second", "failed", T5)
            .await
            .unwrap();
        let held = &store.sent_limits("a").await.unwrap()[0];
        assert_eq!((held.limit_amps, held.applied_amps), (6.0, Some(12.5)));
        let computed = SiteComputation {
            computed_at: T5.into(),
            headroom_amps: Some(-1.5),
            ..SiteComputation::default()
        };
        let connector = ConnectorComputation {
            charger_id: charger,
            connector_id: 1,
            measured_amps: Some(11.0),
            paused_since: None,
        };
        let site = store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap()[0]
            .site_id;
        store
            .record_site_computation(site, &computed, &[connector])
            .await
            .unwrap();
        assert_eq!(
            store.sent_limits("a").await.unwrap()[0].measured_amps,
            Some(11.0)
        );
        store.forget_limit(charger, 1, "second").await.unwrap();
        assert!(store.sent_limits("a").await.unwrap().is_empty());
    }
);

store_test!(
    a_site_turned_off_is_held_until_its_limits_are_cleared,
    |store| {
        let (charger, _) = charging_site(&store).await;
        store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap();
        store
            .record_limit("a", T0, &limit(charger, "x"))
            .await
            .unwrap();
        exec(&store, "UPDATE sites SET smart_charging = 'disabled' WHERE id = (SELECT site_id FROM chargers WHERE id = $1)", charger).await;
        let held = store
            .claim_smart_charging_sites("a", T5, T10, T10)
            .await
            .unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].mode.as_str(), "disabled");
        store.forget_limit(charger, 1, "x").await.unwrap();
        assert!(
            store
                .claim_smart_charging_sites("a", T5, T10, T10)
                .await
                .unwrap()
                .is_empty()
        );
    }
);

store_test!(
    a_2_0_1_stations_evse_charges_as_a_connector_with_the_stations_transaction_id,
    |store| {
        // A 2.0.1 station beside the 1.6 charger: its EVSE 1 charging, from its TransactionEvent.
        use crate::station_events::{EventType, TransactionEvent};
        let (_, site) = charging_site(&store).await;
        let station = charger_id(&store, "CS-201").await;
        sqlx::query(
            "UPDATE chargers SET site_id = $1, connection_status = 'online', session = 's2',
               ocpp_version = '2.0.1' WHERE id = $2",
        )
        .bind(site)
        .bind(station)
        .execute(&store.pool)
        .await
        .unwrap();
        let started = TransactionEvent {
            identity: "CS-201".into(),
            station_transaction_id: "tx-201".into(),
            seq_no: 0,
            event_type: EventType::Started,
            evse_id: Some(1),
            id_tag: None,
            id_tag_status: None,
            reservation_id: None,
            stopped_reason: None,
            timestamp: T0.into(),
            energy: Vec::new(),
            latest: None,
            at: T0.into(),
            signed: Vec::new(),
        };
        store
            .apply(&[crate::StateChange::TransactionEvent(Box::new(started))])
            .await
            .unwrap();
        store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap();
        let chargers = store.balanced_chargers("a").await.unwrap();
        let versions: Vec<Option<&str>> =
            chargers.iter().map(|c| c.ocpp_version.as_deref()).collect();
        assert_eq!(versions, [None, Some("2.0.1")]);
        let charging = store.charging_connectors("a").await.unwrap();
        assert_eq!(charging.len(), 2, "the 1.6 connector and the 2.0.1 EVSE");
        let evse = charging.iter().find(|c| c.charger_id == station).unwrap();
        assert_eq!(evse.connector_id, 1);
        assert_eq!(evse.station_transaction_id.as_deref(), Some("tx-201"));
        assert!(charging[0].station_transaction_id.is_none());
    }
);

store_test!(
    an_external_limit_on_the_evse_or_the_station_caps_what_the_balancer_reads,
    |store| {
        use crate::smart_charging::station_reports::{StationReport, Told};
        let (charger, _) = charging_site(&store).await;
        let identity: String = sqlx::query_scalar("SELECT identity FROM chargers WHERE id = $1")
            .bind(charger)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let external = |evse_id: i64, source: &str, amps: f64| {
            crate::StateChange::StationChargingReport(Box::new(StationReport {
                identity: identity.clone(),
                at: T0.into(),
                told: Told::ChargingLimit {
                    evse_id,
                    source: source.into(),
                    grid_critical: None,
                    limit_amps: Some(amps),
                    charging_schedule: None,
                },
            }))
        };
        store
            .claim_smart_charging_sites("a", T0, T10, T10)
            .await
            .unwrap();
        let read =
            || async { store.charging_connectors("a").await.unwrap()[0].external_limit_amps };
        assert_eq!(read().await, None);
        store.apply(&[external(1, "EMS", 13.0)]).await.unwrap();
        assert_eq!(read().await, Some(13.0));
        // The station's own (EVSE 0) counts for each EVSE; the lower one holds.
        store.apply(&[external(0, "SO", 11.0)]).await.unwrap();
        assert_eq!(read().await, Some(11.0));
        // Another EVSE's does not.
        store.apply(&[external(2, "EMS", 6.0)]).await.unwrap();
        assert_eq!(read().await, Some(11.0));
    }
);
