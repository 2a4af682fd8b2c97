//! Which transactions a party gets as sessions and CDRs, and what was last pushed of them.

use super::Window;
use crate::id_tags::IdTagFields;
use crate::ocpi::parties::PartyConnection;
use crate::providers::{NewProvider, Provider};
use crate::tariffs::NewTariff;
use crate::test_support::{charger_id, store_test};
use crate::{EnergyReading, StateChange, Store};
use serde_json::json;

fn at(minute: u32) -> String {
    format!("2026-11-29T09:{minute:02}:00.000000Z")
}

fn start(identity: &str, id: i64, tag: &str, status: &str, minute: u32) -> StateChange {
    StateChange::TransactionStarted {
        identity: identity.into(),
        ocpp_transaction_id: id,
        connector_id: 1,
        id_tag: tag.into(),
        id_tag_status: Some(status.into()),
        meter_start: 1000,
        reservation_id: None,
        started_at: at(minute),
        at: at(minute),
    }
}

fn stop(identity: &str, id: i64, minute: u32) -> StateChange {
    StateChange::TransactionStopped {
        identity: identity.into(),
        ocpp_transaction_id: id,
        meter_stop: 4500,
        stopped_at: at(minute),
        reason: "Local".into(),
        at: at(minute),
        signed: Vec::new(),
    }
}

/// The operators' team (of the default site, where `charger_id` puts chargers), with its CPO
/// identity NL/CMS.
async fn operators(store: &Store) -> i64 {
    charger_id(store, "CP-1").await;
    let team: i64 = sqlx::query_scalar(
        "SELECT s.team_id FROM sites s JOIN chargers c ON c.site_id = s.id
         WHERE c.identity = 'CP-1'",
    )
    .fetch_one(&store.pool)
    .await
    .unwrap();
    store
        .ocpi_save_cpo(team, "NL", "CMS", "Charging Co", None)
        .await
        .unwrap();
    team
}

/// A provider of `team` as party `party_id`, registered (or not), whose driver holds `tag`.
async fn provider(
    store: &Store,
    team: i64,
    party_id: &str,
    tag: &str,
    registered: bool,
) -> Provider {
    let new = NewProvider {
        name: party_id.into(),
        country_code: "NL".into(),
        party_id: party_id.into(),
        tariff_id: None,
    };
    let provider = store.create_provider(team, &new).await.unwrap();
    store
        .create_id_tag(provider.id_tag_team_id, &IdTagFields::accepted(tag))
        .await
        .unwrap();
    let connection = PartyConnection {
        incoming_token_hash: crate::ocpi::token_hash(&format!("token of {party_id}")),
        outgoing_token: Some("B".into()),
        status: if registered { "registered" } else { "pending" }.into(),
        versions_url: None,
        endpoints: None,
        roles: None,
    };
    store
        .ocpi_save_party(provider.id, &connection)
        .await
        .unwrap();
    // The operators' default site (CP-1's) published to it.
    sqlx::query(
        "INSERT INTO ocpi_publications (site_id, provider_id, created_at)
         SELECT c.site_id, $1, '2026-01-01T00:00:00.000000Z' FROM chargers c WHERE c.identity = 'CP-1'",
    )
    .bind(provider.id)
    .execute(&store.pool)
    .await
    .unwrap();
    provider
}

fn all() -> Window {
    Window {
        limit: 100,
        ..Window::default()
    }
}

async fn session_ids(store: &Store, provider: &Provider, window: Window) -> (Vec<i64>, i64) {
    let (rows, total) = store.ocpi_sessions(provider.id, &window).await.unwrap();
    let ids = rows.iter().map(|r| r.transaction.ocpp_transaction_id);
    (ids.collect(), total)
}

store_test!(
    a_party_gets_the_sessions_its_providers_drivers_started_at_its_teams_sites,
    |store| {
        let team = operators(&store).await;
        let emp = provider(&store, team, "EMP", "ROAM-A", true).await;
        let oth = provider(&store, team, "OTH", "ROAM-B", true).await;
        store
            .create_id_tag(team, &IdTagFields::accepted("OWN-1"))
            .await
            .unwrap();
        // A charger of another team's site: the provider is not that team's.
        let owner = store.ensure_user_in("other@example.com", false).await;
        let other_team = owner.unwrap().personal_team_id;
        let address = crate::sites::SiteAddress {
            name: "Elsewhere".into(),
            street: "Damrak".into(),
            house_number: 2,
            house_number_addition: None,
            postal_code: "1012 LG".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let site = store.create_site(other_team, &address).await.unwrap();
        let new = crate::NewCharger {
            identity: "CP-OTHER".into(),
            site_uuid: Some(site),
            ..Default::default()
        };
        store.add_charger(&new).await.unwrap();
        store
            .apply(&[
                start("CP-1", 1, "ROAM-A", "Accepted", 0),
                start("CP-1", 2, "OWN-1", "Accepted", 1),
                start("CP-1", 3, "roam-b", "Accepted", 2),
                start("CP-1", 4, "ROAM-A", "ConcurrentTx", 3),
                start("CP-OTHER", 5, "ROAM-A", "Accepted", 4),
                start("CP-1", 6, "ROAM-A", "Accepted", 5),
                stop("CP-1", 1, 10),
            ])
            .await
            .unwrap();

        assert_eq!(session_ids(&store, &emp, all()).await, (vec![1, 6], 2));
        assert_eq!(session_ids(&store, &oth, all()).await, (vec![3], 1));
        let (rows, _) = store.ocpi_sessions(emp.id, &all()).await.unwrap();
        let first = &rows[0];
        assert_eq!(first.session_id.len(), 36, "a uuid: {}", first.session_id);
        assert_ne!(first.session_id, rows[1].session_id);
        assert_eq!(
            (first.cpo_country_code.as_str(), first.cpo_party_id.as_str()),
            ("NL", "CMS")
        );
        assert_eq!(
            (
                first.emsp_country_code.as_str(),
                first.emsp_party_id.as_str()
            ),
            ("NL", "EMP")
        );
        assert_eq!(first.charger_identity, "CP-1");
        assert_eq!(
            first.transaction.stopped_at.as_deref(),
            Some(at(10).as_str())
        );
        assert_eq!(first.site_uuid.len(), 36);

        // One by its id, the other party's not at all; by the id an event gives.
        let found = store.ocpi_session(emp.id, &first.session_id).await.unwrap();
        assert_eq!(found.map(|s| s.transaction.ocpp_transaction_id), Some(1));
        assert_eq!(
            store.ocpi_session(oth.id, &first.session_id).await.unwrap(),
            None
        );
        let charger = first.transaction.charger_id;
        let of_event = |provider: i64, id: serde_json::Value| {
            let store = store.clone();
            async move {
                (store
                    .ocpi_session_of_event(provider, charger, &id)
                    .await
                    .unwrap())
                .map(|s| s.transaction.ocpp_transaction_id)
            }
        };
        assert_eq!(of_event(emp.id, json!(6)).await, Some(6));
        assert_eq!(of_event(emp.id, json!(3)).await, None);
        assert_eq!(of_event(emp.id, json!("6")).await, None, "not a 2.0.1 id");

        // Pages, and the window of last updates (the running one's is its start).
        let page = Window {
            offset: 1,
            limit: 1,
            ..Window::default()
        };
        assert_eq!(session_ids(&store, &emp, page).await, (vec![6], 2));
        let since = Window {
            from: Some(at(6)),
            ..all()
        };
        assert_eq!(session_ids(&store, &emp, since).await, (vec![1], 1));
        let before = Window {
            to: Some(at(6)),
            ..all()
        };
        assert_eq!(session_ids(&store, &emp, before).await, (vec![6], 1));
    }
);

store_test!(a_cdr_is_a_stopped_session_once_priced, |store| {
    let team = operators(&store).await;
    let emp = provider(&store, team, "EMP", "ROAM-A", true).await;
    let cdrs = async |store: &Store| {
        let (rows, total) = store.ocpi_cdrs(emp.id, &all()).await.unwrap();
        let ids: Vec<i64> = rows
            .iter()
            .map(|r| r.transaction.ocpp_transaction_id)
            .collect();
        (ids, total)
    };
    // Without a tariff: a CDR once stopped.
    store
        .apply(&[start("CP-1", 1, "ROAM-A", "Accepted", 0)])
        .await
        .unwrap();
    assert_eq!(cdrs(&store).await, (vec![], 0));
    store.apply(&[stop("CP-1", 1, 5)]).await.unwrap();
    assert_eq!(cdrs(&store).await, (vec![1], 1));

    // With one: once its cost is written.
    let tariff = NewTariff {
        name: "Energy".into(),
        currency: "EUR".into(),
        body: r#"{"currency":"EUR","elements":[]}"#.into(),
    };
    let tariff = store.create_tariff(team, &tariff).await.unwrap();
    sqlx::query("UPDATE sites SET tariff_id = $1 WHERE team_id = $2")
        .bind(tariff.id)
        .bind(team)
        .execute(&store.pool)
        .await
        .unwrap();
    store
        .apply(&[
            start("CP-1", 2, "ROAM-A", "Accepted", 10),
            stop("CP-1", 2, 20),
        ])
        .await
        .unwrap();
    let (sessions, _) = store.ocpi_sessions(emp.id, &all()).await.unwrap();
    let priced = &sessions[1];
    assert_eq!(
        priced.transaction.tariff_uuid.as_deref(),
        Some(tariff.uuid.as_str())
    );
    assert!(priced.tariff_valid_from.is_some());
    assert_eq!(cdrs(&store).await, (vec![1], 1));
    let cost = r#"{"currency":"EUR","excl_vat":"1.00","incl_vat":"1.21","components":[]}"#;
    store
        .set_transaction_cost(priced.transaction.id, cost)
        .await
        .unwrap();
    assert_eq!(cdrs(&store).await, (vec![1, 2], 2));
});

store_test!(
    running_sessions_come_with_their_reading_and_what_was_last_pushed,
    |store| {
        let team = operators(&store).await;
        let emp = provider(&store, team, "EMP", "ROAM-A", true).await;
        let pending = provider(&store, team, "PND", "ROAM-P", false).await;
        store
            .apply(&[
                start("CP-1", 1, "ROAM-A", "Accepted", 0),
                start("CP-1", 2, "ROAM-P", "Accepted", 1),
            ])
            .await
            .unwrap();
        let reading = r#"[{"timestamp":"2026-11-29T09:07:00Z","sampledValue":[]}]"#;
        store
            .apply(&[StateChange::MeterValue {
                identity: "CP-1".into(),
                connector_id: 1,
                meter_value: reading.into(),
                measured_at: at(7),
                energy: Some(EnergyReading {
                    at: at(7),
                    wh: 1500,
                }),
                at: at(7),
            }])
            .await
            .unwrap();

        // The pending party's is none of these.
        let running = store.ocpi_running_sessions().await.unwrap();
        assert_eq!(running.len(), 1, "{running:?}");
        let session = &running[0].session;
        assert_eq!(session.provider_id, emp.id);
        assert_ne!(session.provider_id, pending.id);
        assert_eq!(session.latest_reading.as_deref(), Some(reading));
        assert_eq!(session.last_updated, at(7), "its newest reading");
        assert_eq!(running[0].pushed_kwh, None);

        let id = session.transaction.id;
        store
            .ocpi_note_session_pushed(emp.id, id, "0.500", Some(r#"{"excl_vat":0.15}"#))
            .await
            .unwrap();
        store
            .ocpi_note_session_pushed(emp.id, id, "0.750", None)
            .await
            .unwrap();
        let running = store.ocpi_running_sessions().await.unwrap();
        assert_eq!(
            (
                running[0].pushed_kwh.as_deref(),
                running[0].pushed_cost.as_deref()
            ),
            (Some("0.750"), None)
        );

        // Stopped: no longer running, and what was pushed of it is forgotten.
        assert_eq!(store.ocpi_forget_stopped_sessions().await.unwrap(), 0);
        store.apply(&[stop("CP-1", 1, 9)]).await.unwrap();
        assert!(store.ocpi_running_sessions().await.unwrap().is_empty());
        assert_eq!(store.ocpi_forget_stopped_sessions().await.unwrap(), 1);
        let (finished, _) = store.ocpi_sessions(emp.id, &all()).await.unwrap();
        assert_eq!(finished[0].latest_reading, None, "stopped: no reading");
    }
);

store_test!(
    a_stations_transaction_is_its_drivers_partys_once_its_id_token_is_told,
    |store| {
        use crate::station_events::{EventType, TransactionEvent};
        let team = operators(&store).await;
        let emp = provider(&store, team, "EMP", "04A2B3C4", true).await;
        let event = |seq_no: i64, event_type, minute| TransactionEvent {
            identity: "CP-1".into(),
            station_transaction_id: "tx-201".into(),
            seq_no,
            event_type,
            evse_id: Some(2),
            id_tag: None,
            id_tag_status: None,
            reservation_id: None,
            stopped_reason: None,
            timestamp: at(minute),
            energy: Vec::new(),
            latest: None,
            at: at(minute),
            signed: Vec::new(),
        };
        let apply = async |events: Vec<TransactionEvent>| {
            let changes: Vec<StateChange> = (events.into_iter())
                .map(|e| StateChange::TransactionEvent(Box::new(e)))
                .collect();
            store.apply(&changes).await.unwrap();
        };
        // Started before the driver's token was read: no one's yet.
        apply(vec![event(0, EventType::Started, 0)]).await;
        assert_eq!(session_ids(&store, &emp, all()).await.1, 0);
        let authorised = TransactionEvent {
            id_tag: Some("04A2B3C4".into()),
            id_tag_status: Some("Accepted".into()),
            ..event(1, EventType::Updated, 1)
        };
        apply(vec![authorised]).await;
        let (rows, total) = store.ocpi_sessions(emp.id, &all()).await.unwrap();
        assert_eq!(total, 1);
        let session = &rows[0];
        assert_eq!(
            session.transaction.station_transaction_id.as_deref(),
            Some("tx-201")
        );
        assert_eq!(session.transaction.connector_id, 2, "its EVSE");
        let charger = session.transaction.charger_id;
        let found = store
            .ocpi_session_of_event(emp.id, charger, &json!("tx-201"))
            .await
            .unwrap();
        assert_eq!(
            found.map(|s| s.session_id),
            Some(session.session_id.clone())
        );
        let by_number = store
            .ocpi_session_of_event(
                emp.id,
                charger,
                &json!(session.transaction.ocpp_transaction_id),
            )
            .await
            .unwrap();
        assert_eq!(by_number, None, "a station's is named by its own id");
    }
);
