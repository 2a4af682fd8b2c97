use super::*;
use crate::test_support::store_test;

fn at(s: &str) -> String {
    format!("2026-11-21T10:00:{s}.000000Z")
}

store_test!(a_user_is_created_once_with_a_personal_team, |store| {
    let first = store.ensure_user("Ops@Example.com").await.unwrap();
    let again = store.ensure_user("ops@example.com").await.unwrap();
    assert_eq!(first.id, again.id);
    assert_eq!(first.personal_team_id, again.personal_team_id);
    assert_eq!(first.email, "ops@example.com");
});

store_test!(tokens_authenticate_only_with_their_secret, |store| {
    let user = store.ensure_user("a@example.com").await.unwrap();
    let scopes = vec![Scope::CHARGERS_READ.to_string()];
    let token = store.create_token(user.id, "cli", &scopes).await.unwrap();
    let owner = store
        .authenticate(&token, chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner.user_id, user.id);
    assert!(owner.allows(Scope::CHARGERS_READ));
    assert!(!owner.allows(Scope::METER_VALUES_READ));
    let (id, _) = token.split_once('|').unwrap();
    let forged = format!("{id}|{}", "x".repeat(40));
    assert!(
        store
            .authenticate(&forged, chrono::Utc::now())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .authenticate("garbage", chrono::Utc::now())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .create_token(user.id, "bad", &["root".into()])
            .await
            .is_err()
    );
});

store_test!(chargers_are_unique_and_visible_to_operators_only, |store| {
    let operator = store.ensure_user("op@example.com").await.unwrap();
    let new = NewCharger {
        identity: "CP-1".into(),
        ..Default::default()
    };
    let uuid = store.add_charger(&new).await.unwrap();
    assert!(matches!(
        store.add_charger(&new).await,
        Err(StoreError::Conflict(_))
    ));
    let (page, total) = store
        .chargers_visible_to(operator.id, None, 25, 0)
        .await
        .unwrap();
    assert_eq!((page.len(), total), (1, 1));
    assert_eq!(page[0].uuid, uuid);
    assert_eq!(page[0].connection_status, "never_seen");
    assert_eq!(store.charger_password("CP-1").await.unwrap(), Some(None));
    assert_eq!(store.charger_password("CP-2").await.unwrap(), None);
    let missing_site = NewCharger {
        identity: "CP-3".into(),
        site_uuid: Some(uuid::Uuid::new_v4().to_string()),
        ..Default::default()
    };
    assert!(matches!(
        store.add_charger(&missing_site).await,
        Err(StoreError::NotFound(_))
    ));
});

store_test!(
    a_replaced_session_ending_does_not_take_the_charger_offline,
    |store| {
        let op = store.ensure_user("op@example.com").await.unwrap();
        let uuid = store
            .add_charger(&NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let connected = |session: &str, t: &str| StateChange::Connected {
            identity: "CP-1".into(),
            session: session.into(),
            server: "gw-1".into(),
            at: at(t),
            ocpp_version: Some("1.6".into()),
        };
        let disconnected = |session: &str, t: &str| StateChange::Disconnected {
            identity: "CP-1".into(),
            session: session.into(),
            at: at(t),
        };
        store
            .apply(&[
                connected("s1", "01"),
                connected("s2", "02"),
                disconnected("s1", "03"),
            ])
            .await
            .unwrap();
        let charger = store
            .charger_visible_to(op.id, &uuid)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(charger.connection_status, "online");
        assert_eq!(
            charger.last_connection_at.as_deref(),
            Some(at("02").as_str())
        );
        assert_eq!(charger.server.as_deref(), Some("gw-1"));
        store.apply(&[disconnected("s2", "04")]).await.unwrap();
        let charger = store
            .charger_visible_to(op.id, &uuid)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(charger.connection_status, "offline");
        assert_eq!(
            charger.last_disconnection_at.as_deref(),
            Some(at("04").as_str())
        );
    }
);

store_test!(
    a_charger_shows_the_ocpp_version_of_its_newest_connection,
    |store| {
        let op = store.ensure_user("op@example.com").await.unwrap();
        let uuid = store
            .add_charger(&NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let version = async || {
            let charger = store.charger_visible_to(op.id, &uuid).await.unwrap();
            charger.unwrap().ocpp_version
        };
        assert_eq!(version().await, None, "never connected");
        let connected = |t: &str, version: Option<&str>| StateChange::Connected {
            identity: "CP-1".into(),
            session: format!("s-{t}"),
            server: "gw-1".into(),
            at: at(t),
            ocpp_version: version.map(str::to_string),
        };
        store.apply(&[connected("01", Some("1.6"))]).await.unwrap();
        assert_eq!(version().await.as_deref(), Some("1.6"));
        // Upgraded, it comes back over 2.0.1.
        store
            .apply(&[connected("03", Some("2.0.1"))])
            .await
            .unwrap();
        assert_eq!(version().await.as_deref(), Some("2.0.1"));
        // An older connect read late changes nothing; nor does one that names no version.
        store.apply(&[connected("02", Some("1.6"))]).await.unwrap();
        store.apply(&[connected("04", None)]).await.unwrap();
        assert_eq!(version().await.as_deref(), Some("2.0.1"));
    }
);

store_test!(
    a_gateway_that_starts_again_ends_the_sessions_of_its_last_run,
    |store| {
        let op = store.ensure_user("op@example.com").await.unwrap();
        let mut uuids = Vec::new();
        for identity in ["CP-1", "CP-2", "CP-3"] {
            let charger = NewCharger {
                identity: identity.into(),
                ..Default::default()
            };
            uuids.push(store.add_charger(&charger).await.unwrap());
        }
        let connected = |identity: &str, server: &str, t: &str| StateChange::Connected {
            identity: identity.into(),
            session: format!("{identity}-{t}"),
            server: server.into(),
            at: at(t),
            ocpp_version: Some("1.6".into()),
        };
        // gw-1 crashed with CP-1 online; CP-2 is on gw-2; gw-1 restarts at 05, and CP-3
        // reaches it at 06, before the start's record is read (another partition).
        store
            .apply(&[
                connected("CP-1", "gw-1", "01"),
                connected("CP-2", "gw-2", "02"),
                connected("CP-3", "gw-1", "06"),
                StateChange::GatewayStarted {
                    server: "gw-1".into(),
                    at: at("05"),
                    beacons: true,
                },
            ])
            .await
            .unwrap();
        let mut statuses = Vec::new();
        for uuid in &uuids {
            let charger = store
                .charger_visible_to(op.id, uuid)
                .await
                .unwrap()
                .unwrap();
            statuses.push((charger.connection_status, charger.last_disconnection_at));
        }
        assert_eq!(
            statuses,
            [
                ("offline".to_string(), Some(at("05"))),
                ("online".to_string(), None),
                ("online".to_string(), None),
            ]
        );
    }
);

store_test!(
    a_retried_start_keeps_one_transaction_under_the_newest_id,
    |store| {
        store
            .add_charger(&NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let start = |id: i64| StateChange::TransactionStarted {
            identity: "CP-1".into(),
            ocpp_transaction_id: id,
            connector_id: 1,
            id_tag: "TAG".into(),
            id_tag_status: None,
            meter_start: 100,
            reservation_id: None,
            started_at: at("00"),
            at: at("01"),
        };
        store.apply(&[start(7), start(7), start(9)]).await.unwrap();
        store
            .apply(&[StateChange::TransactionStopped {
                identity: "CP-1".into(),
                ocpp_transaction_id: 9,
                meter_stop: 1600,
                stopped_at: at("30"),
                reason: "Local".into(),
                at: at("30"),
                signed: Vec::new(),
            }])
            .await
            .unwrap();
        let rows: Vec<(i64, Option<i64>)> =
            sqlx::query_as("SELECT ocpp_transaction_id, meter_stop FROM transactions")
                .fetch_all(&store.pool)
                .await
                .unwrap();
        assert_eq!(rows, vec![(9, Some(1600))]);
    }
);

#[tokio::test]
async fn the_newest_reading_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    store
        .add_charger(&NewCharger {
            identity: "CP-1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let reading = |v: &str, measured: &str| StateChange::MeterValue {
        identity: "CP-1".into(),
        connector_id: 1,
        meter_value: v.into(),
        measured_at: at(measured),
        energy: None,
        at: at("30"),
    };
    // The second reading is newer; the third arrives last but was measured earlier.
    store
        .apply(&[
            reading("[1]", "01"),
            reading("[2]", "03"),
            reading("[3]", "02"),
        ])
        .await
        .unwrap();
    store.close().await;
    let reopened = Store::open(dir.path()).await.unwrap();
    let stored = reopened.latest_meter_values().await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].identity.as_str(), stored[0].connector_id),
        ("CP-1", 1)
    );
    assert_eq!(stored[0].meter_value, "[2]");
    assert_eq!(stored[0].measured_at, at("03"));
}

store_test!(
    a_batch_of_many_readings_keeps_each_connectors_newest,
    |store| {
        for identity in ["CP-1", "CP-2"] {
            store
                .add_charger(&NewCharger {
                    identity: identity.into(),
                    ..Default::default()
                })
                .await
                .unwrap();
        }
        let reading =
            |identity: &str, connector_id: i64, v: &str, measured: &str| StateChange::MeterValue {
                identity: identity.into(),
                connector_id,
                meter_value: v.into(),
                measured_at: at(measured),
                energy: None,
                at: at("59"),
            };
        // 300 connectors of CP-1: more rows than one statement takes.
        let mut batch: Vec<StateChange> = (1..=300)
            .map(|c| reading("CP-1", c, &format!("[{c}]"), "10"))
            .collect();
        batch.extend([
            // CP-2's connector 1, then an older reading of it (kept out), then a newer one.
            reading("CP-2", 1, "[old]", "20"),
            reading("CP-2", 1, "[older]", "05"),
            StateChange::Heartbeat {
                identity: "CP-2".into(),
                at: at("21"),
            },
            reading("CP-2", 1, "[new]", "30"),
            // A charger nobody registered: no row, and the rest of the batch is written.
            reading("CP-9", 1, "[stray]", "30"),
            // CP-1's connector 7 again, newer.
            reading("CP-1", 7, "[7 again]", "40"),
        ]);
        store.apply(&batch).await.unwrap();
        let stored = store.latest_meter_values().await.unwrap();
        let value = |identity: &str, connector_id: i64| {
            stored
                .iter()
                .find(|s| s.identity == identity && s.connector_id == connector_id)
                .map(|s| (s.meter_value.as_str(), s.measured_at.clone()))
        };
        assert_eq!(stored.len(), 301, "300 connectors of CP-1 and one of CP-2");
        assert_eq!(value("CP-1", 1), Some(("[1]", at("10"))));
        assert_eq!(value("CP-1", 300), Some(("[300]", at("10"))));
        assert_eq!(value("CP-1", 7), Some(("[7 again]", at("40"))));
        assert_eq!(value("CP-2", 1), Some(("[new]", at("30"))));
        assert_eq!(value("CP-9", 1), None);
    }
);
