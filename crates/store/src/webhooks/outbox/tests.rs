//! The outbox holds the events of the changes the store keeps, once each, and nothing while no
//! team listens.

use super::*;
use crate::test_support::{charger_id, store_test};
use crate::{StateChange, Store};

/// A webhook of the operators' team asking for everything (rows as helper code would write).
async fn listen(store: &Store) {
    let team: i64 = sqlx::query_scalar("SELECT team_id FROM sites ORDER BY id LIMIT 1")
        .fetch_one(&store.pool)
        .await
        .unwrap();
    let now = now_record_time();
    sqlx::query(
        "INSERT INTO webhooks (uuid, team_id, url, event_types, enabled, secret, created_at,
           updated_at) VALUES ('w-1', $1, 'https://example.com/', '[]', 1, 'whsec_x', $2, $2)",
    )
    .bind(team)
    .bind(&now)
    .execute(&store.pool)
    .await
    .unwrap();
}

async fn events(store: &Store) -> Vec<(String, String, String)> {
    sqlx::query_as("SELECT type, subject, data FROM webhook_events ORDER BY seq")
        .fetch_all(&store.pool)
        .await
        .unwrap()
}

fn connected(session: &str) -> StateChange {
    StateChange::Connected {
        identity: "CP-1".into(),
        session: session.into(),
        server: "gw-1".into(),
        at: "2026-11-29T10:00:00.000000Z".into(),
        ocpp_version: Some("1.6".into()),
    }
}

fn status(status: &str, error: &str, at: &str) -> StateChange {
    StateChange::Status {
        identity: "CP-1".into(),
        connector_id: 1,
        status: status.into(),
        error: error.into(),
        info: None,
        vendor_id: None,
        vendor_error_code: None,
        at: at.into(),
    }
}

store_test!(nothing_is_kept_while_no_team_listens, |store| {
    charger_id(&store, "CP-1").await;
    store.apply(&[connected("s-1")]).await.unwrap();
    assert!(events(&store).await.is_empty());
});

store_test!(
    a_registered_ocpi_party_listens_and_a_pending_one_does_not,
    |store| {
        use crate::ocpi::parties::PartyConnection;
        use crate::providers::NewProvider;
        charger_id(&store, "CP-1").await;
        let team: i64 = sqlx::query_scalar("SELECT team_id FROM sites ORDER BY id LIMIT 1")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let new = NewProvider {
            name: "EMP".into(),
            country_code: "NL".into(),
            party_id: "EMP".into(),
            tariff_id: None,
        };
        let provider = store.create_provider(team, &new).await.unwrap();
        let mut party = PartyConnection {
            incoming_token_hash: crate::ocpi::token_hash("token-a"),
            outgoing_token: None,
            status: "pending".into(),
            versions_url: None,
            endpoints: None,
            roles: None,
        };
        store.ocpi_save_party(provider.id, &party).await.unwrap();
        store.apply(&[connected("s-1")]).await.unwrap();
        assert!(events(&store).await.is_empty(), "a pending party does not");
        party.status = "registered".into();
        store.ocpi_save_party(provider.id, &party).await.unwrap();
        store.apply(&[connected("s-2")]).await.unwrap();
        let types: Vec<String> = events(&store).await.into_iter().map(|e| e.0).collect();
        assert_eq!(types, ["charger.connected"], "a registered party does");
    }
);

store_test!(a_replayed_batch_keeps_its_events_once, |store| {
    charger_id(&store, "CP-1").await;
    listen(&store).await;
    store.apply(&[connected("s-1")]).await.unwrap();
    // The bus replays a batch the materialiser had not committed before a crash.
    store.apply(&[connected("s-1")]).await.unwrap();
    store.apply(&[connected("s-2")]).await.unwrap();
    let kept = events(&store).await;
    let types: Vec<&str> = kept.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(types, ["charger.connected", "charger.connected"]);
    let data: Value = serde_json::from_str(&kept[1].2).unwrap();
    assert_eq!(
        (data["identity"].as_str(), data["session"].as_str()),
        (Some("CP-1"), Some("s-2"))
    );
    assert!(data["charger_uuid"].as_str().is_some_and(|u| !u.is_empty()));
});

store_test!(
    a_status_is_told_when_it_changes_and_a_fault_when_it_starts,
    |store| {
        charger_id(&store, "CP-1").await;
        listen(&store).await;
        let batch = [
            status("Available", "NoError", "2026-11-29T10:00:00.000000Z"),
            // Said again after a reconnection: no change.
            status("Available", "NoError", "2026-11-29T10:01:00.000000Z"),
            status("Faulted", "GroundFailure", "2026-11-29T10:02:00.000000Z"),
            status("Faulted", "GroundFailure", "2026-11-29T10:03:00.000000Z"),
        ];
        store.apply(&batch).await.unwrap();
        let types: Vec<String> = events(&store)
            .await
            .into_iter()
            .map(|(t, _, _)| t)
            .collect();
        assert_eq!(
            types,
            [
                "connector.status_changed",
                "connector.status_changed",
                "charger.faulted"
            ]
        );
    }
);

store_test!(
    a_stopped_transaction_is_told_with_its_energy_and_duration,
    |store| {
        charger_id(&store, "CP-1").await;
        listen(&store).await;
        let start = StateChange::TransactionStarted {
            identity: "CP-1".into(),
            ocpp_transaction_id: 7,
            connector_id: 1,
            id_tag: "TAG-1".into(),
            id_tag_status: Some("Accepted".into()),
            meter_start: 1_000,
            reservation_id: None,
            started_at: "2026-11-29T10:00:00.000000Z".into(),
            at: "2026-11-29T10:00:00.000000Z".into(),
        };
        let stop = StateChange::TransactionStopped {
            identity: "CP-1".into(),
            ocpp_transaction_id: 7,
            meter_stop: 8_500,
            stopped_at: "2026-11-29T10:30:00.000000Z".into(),
            reason: "Local".into(),
            at: "2026-11-29T10:30:00.000000Z".into(),
            signed: Vec::new(),
        };
        store.apply(&[start, stop]).await.unwrap();
        store
            .emit_transactions_ended(&[Ended::V16("CP-1", 7)])
            .await
            .unwrap();
        store
            .emit_transactions_ended(&[Ended::V16("CP-1", 7)])
            .await
            .unwrap();
        let kept = events(&store).await;
        let types: Vec<&str> = kept.iter().map(|(t, _, _)| t.as_str()).collect();
        assert_eq!(types, ["transaction.started", "transaction.ended"]);
        let ended: Value = serde_json::from_str(&kept[1].2).unwrap();
        assert_eq!(ended["energy_wh"], 7_500);
        assert_eq!(ended["duration_s"], 1_800);
        assert_eq!(ended["transaction_id"], 7);
        assert_eq!(ended["reason"], "Local");
    }
);

store_test!(a_refused_tag_at_a_start_is_told, |store| {
    charger_id(&store, "CP-1").await;
    listen(&store).await;
    let start = StateChange::TransactionStarted {
        identity: "CP-1".into(),
        ocpp_transaction_id: 8,
        connector_id: 1,
        id_tag: "BLOCKED".into(),
        id_tag_status: Some("Blocked".into()),
        meter_start: 0,
        reservation_id: None,
        started_at: "2026-11-29T10:00:00.000000Z".into(),
        at: "2026-11-29T10:00:00.000000Z".into(),
    };
    store.apply(&[start]).await.unwrap();
    let kept = events(&store).await;
    assert_eq!(kept[1].0, "id_tag.refused");
    let data: Value = serde_json::from_str(&kept[1].2).unwrap();
    assert_eq!(
        (data["id_tag"].as_str(), data["status"].as_str()),
        (Some("BLOCKED"), Some("Blocked"))
    );
});

#[test]
fn an_event_id_depends_on_what_it_is_about() {
    let a = event_id("charger.connected", &["CP-1", "s-1"]);
    assert_eq!(a, event_id("charger.connected", &["CP-1", "s-1"]));
    assert_ne!(a, event_id("charger.connected", &["CP-1", "s-2"]));
    assert_ne!(a, event_id("charger.disconnected", &["CP-1", "s-1"]));
    // The parts are kept apart: ("CP-1s", "-1") is another key.
    assert_ne!(a, event_id("charger.connected", &["CP-1s", "-1"]));
    assert!(a.starts_with("evt_") && a.len() == 36);
}

store_test!(
    a_charger_whose_gateway_fell_silent_is_told_offline,
    |store| {
        charger_id(&store, "CP-1").await;
        listen(&store).await;
        let alive = StateChange::GatewayAlive {
            server: "gw-1".into(),
            at: "2026-11-29T10:00:00.000000Z".into(),
        };
        // Another gateway heard later: cms hears the bus, gw-1 is the one silent.
        let other = StateChange::GatewayAlive {
            server: "gw-2".into(),
            at: "2026-11-29T10:04:30.000000Z".into(),
        };
        store
            .apply(&[alive, connected("s-1"), other])
            .await
            .unwrap();
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-29T10:05:00Z").unwrap();
        let swept = store
            .end_sessions_of_silent_gateways(now.into(), chrono::Duration::seconds(60))
            .await
            .unwrap();
        assert_eq!(swept.len(), 1);
        let kept = events(&store).await;
        assert_eq!(kept.last().unwrap().0, "charger.offline");
        let data: Value = serde_json::from_str(&kept.last().unwrap().2).unwrap();
        assert_eq!(
            (data["session"].as_str(), data["gateway"].as_str()),
            (Some("s-1"), Some("gw-1"))
        );
    }
);

store_test!(
    a_site_over_its_limit_is_told_once_while_it_stays_over,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        listen(&store).await;
        let site: i64 = sqlx::query_scalar("SELECT site_id FROM chargers WHERE id = $1")
            .bind(charger)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO site_smart_charging (site_id, grid_limit_amps, updated_at)
         VALUES ($1, 63.0, 'now')",
        )
        .bind(site)
        .execute(&store.pool)
        .await
        .unwrap();
        let computed = |at: &str, meter: f64| crate::smart_charging::balancer::SiteComputation {
            computed_at: at.into(),
            meter_amps: Some(meter),
            headroom_amps: Some(63.0 - meter),
            ..Default::default()
        };
        for (at, meter) in [
            ("2026-11-29T10:00:00.000000Z", 60.0),
            // Over: told.
            ("2026-11-29T10:00:01.000000Z", 64.5),
            // Still over: not again.
            ("2026-11-29T10:00:02.000000Z", 66.0),
            ("2026-11-29T10:00:03.000000Z", 61.0),
            // Over again: told again.
            ("2026-11-29T10:00:04.000000Z", 65.0),
        ] {
            store
                .record_site_computation(site, &computed(at, meter), &[])
                .await
                .unwrap();
        }
        let kept: Vec<Value> = (events(&store).await.into_iter())
            .filter(|(t, _, _)| t == "site.limit_exceeded")
            .map(|(_, _, data)| serde_json::from_str(&data).unwrap())
            .collect();
        let meters: Vec<&Value> = kept.iter().map(|d| &d["meter_amps"]).collect();
        assert_eq!(meters, [&json!(64.5), &json!(65.0)]);
        assert_eq!(kept[0]["grid_limit_amps"], 63.0);
        assert!(kept[0]["site_uuid"].as_str().is_some_and(|u| !u.is_empty()));
    }
);

store_test!(a_tag_refused_in_answer_to_an_authorize_is_told, |store| {
    charger_id(&store, "CP-1").await;
    listen(&store).await;
    let refused = StateChange::IdTagRefused {
        identity: "CP-1".into(),
        id_tag: "STRANGER".into(),
        status: "Invalid".into(),
        at: "2026-11-29T10:00:00.000000Z".into(),
    };
    store.apply(std::slice::from_ref(&refused)).await.unwrap();
    // Replayed: once.
    store.apply(&[refused]).await.unwrap();
    let kept = events(&store).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "id_tag.refused");
    let data: Value = serde_json::from_str(&kept[0].2).unwrap();
    assert_eq!(
        (data["id_tag"].as_str(), data["status"].as_str()),
        (Some("STRANGER"), Some("Invalid"))
    );
});

store_test!(
    a_charger_silent_past_its_heartbeat_is_told_offline_once_a_session,
    |store| {
        charger_id(&store, "CP-1").await;
        listen(&store).await;
        // Connected at 10:00, a reading at 10:04 (the heartbeat interval is 5 minutes: stale after
        // 7.5 minutes of silence).
        store.apply(&[connected("s-1")]).await.unwrap();
        let status_at = status("Available", "NoError", "2026-11-29T10:04:00.000000Z");
        store.apply(&[status_at]).await.unwrap();
        let stale = chrono::Duration::seconds(450);
        let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap().to_utc();
        let found = store
            .tell_overdue_chargers(at("2026-11-29T10:11:00Z"), stale)
            .await
            .unwrap();
        assert_eq!(found, 0, "its status at 10:04 is within 7.5 minutes");
        for _ in 0..2 {
            let found = store
                .tell_overdue_chargers(at("2026-11-29T10:12:00Z"), stale)
                .await
                .unwrap();
            assert_eq!(found, 1);
        }
        let offline: Vec<Value> = (events(&store).await.into_iter())
            .filter(|(t, _, _)| t == "charger.offline")
            .map(|(_, _, data)| serde_json::from_str(&data).unwrap())
            .collect();
        assert_eq!(offline.len(), 1, "once a session: {offline:?}");
        assert_eq!(
            (
                offline[0]["session"].as_str(),
                offline[0]["reason"].as_str()
            ),
            (Some("s-1"), Some("heartbeat_overdue"))
        );
    }
);
