//! Commands kept with their actions, and what a party may command, on both backends.

use super::*;
use crate::actions::NewAction;
use crate::providers::NewProvider;
use crate::sites::{SiteAddress, SiteAuthorization};
use crate::test_support::store_test;

const T0: &str = "2026-11-29T10:00:00.000000Z";
const LATER: &str = "2099-01-01T00:00:00.000000Z";

/// A team with a provider of its own; (team id, provider id).
async fn team_with_provider(store: &Store, name: &str) -> (i64, i64) {
    let team: i64 = sqlx::query_scalar(
        "INSERT INTO teams (uuid, name, type, created_at, updated_at)
         VALUES ($1, $2, 'organization', $3, $3) RETURNING id",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(name)
    .bind(T0)
    .fetch_one(&store.pool)
    .await
    .unwrap();
    let new = NewProvider {
        name: format!("{name}'s eMSP"),
        country_code: "NL".into(),
        party_id: "EMP".into(),
        tariff_id: None,
    };
    (team, store.create_provider(team, &new).await.unwrap().id)
}

/// A site of `team` with charger `identity`; (site uuid, site id, charger id, charger uuid).
async fn site_with_charger(store: &Store, team: i64, identity: &str) -> (String, i64, i64, String) {
    let address = SiteAddress {
        name: format!("Site of {identity}"),
        street: "Stationsplein".into(),
        house_number: 1,
        house_number_addition: None,
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "NL".into(),
    };
    let site = store
        .create_site_with(team, &address, &SiteAuthorization::default())
        .await
        .unwrap();
    let charger = crate::NewCharger {
        identity: identity.into(),
        site_uuid: Some(site.clone()),
        ..Default::default()
    };
    let charger_uuid = store.add_charger(&charger).await.unwrap();
    let (site_id, charger_id): (i64, i64) =
        sqlx::query_as("SELECT site_id, id FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_one(&store.pool)
            .await
            .unwrap();
    (site, site_id, charger_id, charger_uuid)
}

/// Publishes site `site_id` to `provider`: its party may command it from then on.
async fn publish(store: &Store, site_id: i64, provider: i64) {
    sqlx::query(
        "INSERT INTO ocpi_publications (site_id, provider_id, created_at) VALUES ($1, $2, $3)",
    )
    .bind(site_id)
    .bind(provider)
    .bind(T0)
    .execute(&store.pool)
    .await
    .unwrap();
}

fn command(provider: i64, name: &str) -> NewCommand {
    NewCommand {
        provider_id: provider,
        command: name.into(),
        response_url: "https://emsp.example/commands/1".into(),
        ..NewCommand::default()
    }
}

async fn action(store: &Store, charger: i64, uuid: &str) {
    let new = NewAction {
        uuid: uuid.into(),
        charger_id: charger,
        session: "s-1".into(),
        action: "RemoteStartTransaction".into(),
        request: r#"{"idTag":"APP-1"}"#.into(),
        requested_by_type: "system".into(),
        requested_by_email: None,
        timeout_ms: 30_000,
        created_at: T0.into(),
        expires_at: LATER.into(),
        ocpp_version: "1.6".into(),
        published: true,
    };
    store.insert_action(&new).await.unwrap();
}

store_test!(
    a_command_is_kept_with_its_action_and_its_first_result,
    |store| {
        let (team, provider) = team_with_provider(&store, "A").await;
        let (_, _, charger, _) = site_with_charger(&store, team, "CP-CMD-1").await;
        let id = store
            .ocpi_add_command(&NewCommand {
                charger_id: Some(charger),
                token_uid: Some("APP-1".into()),
                location_id: Some("loc".into()),
                ..command(provider, "START_SESSION")
            })
            .await
            .unwrap();
        let kept = store.ocpi_command(id).await.unwrap().unwrap();
        assert_eq!((kept.response, kept.action_uuid), (None, None));
        assert_eq!(kept.token_uid.as_deref(), Some("APP-1"));

        action(&store, charger, "act-1").await;
        store
            .ocpi_command_answered(id, Some("act-1"), "ACCEPTED")
            .await
            .unwrap();
        let pending = store
            .ocpi_command_of_action("act-1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((pending.id, pending.provider_id), (id, provider));
        assert_eq!(pending.status, "pending");
        assert_eq!(pending.action, "RemoteStartTransaction");
        sqlx::query(
            "UPDATE charger_actions SET status = 'answered', response = '{\"status\":\"Accepted\"}'
         WHERE uuid = 'act-1'",
        )
        .execute(&store.pool)
        .await
        .unwrap();
        let answered = store
            .ocpi_command_of_action("act-1")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(answered.status, "answered");
        assert_eq!(
            answered.response.as_deref(),
            Some(r#"{"status":"Accepted"}"#)
        );
        assert_eq!(store.ocpi_command_of_action("other").await.unwrap(), None);

        store.ocpi_command_result(id, "ACCEPTED").await.unwrap();
        store.ocpi_command_result(id, "TIMEOUT").await.unwrap();
        let kept = store.ocpi_command(id).await.unwrap().unwrap();
        assert_eq!(kept.result.as_deref(), Some("ACCEPTED"), "the first stays");
        assert!(kept.finished_at.is_some());

        // One the charger was not there for: answered without an action.
        let rejected = store
            .ocpi_add_command(&command(provider, "UNLOCK_CONNECTOR"))
            .await
            .unwrap();
        store
            .ocpi_command_answered(rejected, None, "REJECTED")
            .await
            .unwrap();
        let listed = store.ocpi_commands_of_provider(provider, 10).await.unwrap();
        let shown: Vec<_> = listed
            .iter()
            .map(|c| (c.command.as_str(), c.response.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("UNLOCK_CONNECTOR", Some("REJECTED")),
                ("START_SESSION", Some("ACCEPTED"))
            ]
        );
    }
);

store_test!(
    a_party_commands_only_its_teams_sites_and_its_drivers_sessions,
    |store| {
        let (team, provider) = team_with_provider(&store, "A").await;
        let (other_team, other_provider) = team_with_provider(&store, "B").await;
        let (site, site_id, charger, charger_uuid) =
            site_with_charger(&store, team, "CP-CMD-2").await;
        let (other_site, other_site_id, ..) =
            site_with_charger(&store, other_team, "CP-CMD-3").await;
        assert_eq!(
            store.ocpi_command_location(provider, &site).await.unwrap(),
            None,
            "a site not published to the provider"
        );
        publish(&store, site_id, provider).await;
        publish(&store, other_site_id, other_provider).await;

        assert_eq!(
            store.ocpi_command_location(provider, &site).await.unwrap(),
            Some(site_id)
        );
        let shouted = site.to_ascii_uppercase();
        assert_eq!(
            store
                .ocpi_command_location(provider, &shouted)
                .await
                .unwrap(),
            Some(site_id),
            "a uuid in any case"
        );
        assert_eq!(
            store
                .ocpi_command_location(other_provider, &site)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .ocpi_command_location(provider, &other_site)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store.ocpi_command_location(provider, "nope").await.unwrap(),
            None
        );

        let all = store.ocpi_command_evses(site_id, None).await.unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(
            (all[0].charger_id, all[0].uuid.as_str()),
            (charger, charger_uuid.as_str())
        );
        assert_eq!(all[0].identity, "CP-CMD-2");
        let named = store
            .ocpi_command_evses(site_id, Some(&charger_uuid))
            .await
            .unwrap();
        assert_eq!(named, all);
        assert!(
            store
                .ocpi_command_evses(site_id, Some("not-a-charger"))
                .await
                .unwrap()
                .is_empty()
        );

        // A session runs on the provider's driver's tag: the provider's, no one else's.
        let provider_uuid: String = sqlx::query_scalar("SELECT uuid FROM providers WHERE id = $1")
            .bind(provider)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let transaction: i64 = sqlx::query_scalar(
            "INSERT INTO transactions (charger_id, connector_id, ocpp_transaction_id, id_tag,
           meter_start, started_at, created_at, updated_at, provider_uuid)
         VALUES ($1, 1, 4242, 'APP-1', 0, $2, $2, $2, $3) RETURNING id",
        )
        .bind(charger)
        .bind(T0)
        .bind(&provider_uuid)
        .fetch_one(&store.pool)
        .await
        .unwrap();
        // Its uuid (SQLite's is written by a trigger after the insert).
        let transaction: String = sqlx::query_scalar("SELECT uuid FROM transactions WHERE id = $1")
            .bind(transaction)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let session = store
            .ocpi_command_session(provider, &transaction.to_ascii_uppercase())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                session.charger_id,
                session.ocpp_transaction_id,
                session.stopped_at
            ),
            (charger, 4242, None)
        );
        assert_eq!(session.identity, "CP-CMD-2");
        let someone_elses = store
            .ocpi_command_session(other_provider, &transaction)
            .await
            .unwrap();
        assert_eq!(someone_elses, None);
        assert_eq!(
            store.ocpi_command_session(provider, "x").await.unwrap(),
            None
        );
        assert_eq!(
            store
                .ocpi_command_session(provider, "999999")
                .await
                .unwrap(),
            None
        );

        assert_eq!(store.ocpi_evse_connector(charger, 1).await.unwrap(), None);
    }
);

store_test!(
    an_emsps_reservation_is_found_by_its_id_in_any_case_and_replaced_while_in_force,
    |store| {
        let (team, provider) = team_with_provider(&store, "A").await;
        let (_, other_provider) = team_with_provider(&store, "B").await;
        let (_, _, charger, _) = site_with_charger(&store, team, "CP-CMD-4").await;
        let made = store
            .add_reservation(
                charger,
                &NewReservation {
                    connector_id: 1,
                    id_tag: "APP-1".into(),
                    parent_id_tag: None,
                    expires_at: LATER.into(),
                },
            )
            .await
            .unwrap();
        let id = store
            .ocpi_add_command(&NewCommand {
                reservation_id: Some("res-7".into()),
                ..command(provider, "RESERVE_NOW")
            })
            .await
            .unwrap();
        assert_eq!(
            store
                .ocpi_reservation_in_force(provider, "RES-7")
                .await
                .unwrap(),
            None,
            "not until the command names its reservation"
        );
        store.ocpi_command_reservation(id, made.id).await.unwrap();
        let found = store
            .ocpi_reservation_in_force(provider, "RES-7")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (found.reservation.id, found.identity.as_str()),
            (made.id, "CP-CMD-4")
        );
        assert_eq!(
            store
                .ocpi_reservation_in_force(other_provider, "res-7")
                .await
                .unwrap(),
            None
        );

        store
            .reservation_answered(made.id, true, "Accepted")
            .await
            .unwrap();
        let replacement = NewReservation {
            connector_id: 2,
            id_tag: "APP-2".into(),
            parent_id_tag: None,
            expires_at: "2098-01-01T00:00:00.000000Z".into(),
        };
        assert!(
            store
                .ocpi_replace_reservation(made.id, &replacement)
                .await
                .unwrap()
        );
        let replaced = store.reservation(charger, made.id).await.unwrap().unwrap();
        assert_eq!(
            (
                replaced.connector_id,
                replaced.id_tag.as_str(),
                replaced.status.as_str()
            ),
            (2, "APP-2", "pending")
        );
        assert_eq!(replaced.station_status, None);

        store
            .end_reservation(charger, made.id, "cancelled")
            .await
            .unwrap();
        assert_eq!(
            store
                .ocpi_reservation_in_force(provider, "res-7")
                .await
                .unwrap(),
            None,
            "ended: no longer in force"
        );
        assert!(
            !store
                .ocpi_replace_reservation(made.id, &replacement)
                .await
                .unwrap()
        );
    }
);
