//! Reads from memory as deployed at scale (docs/api.md "Reads from memory"): two `cms api`
//! replicas on one store, each holding verified tokens and charger access in memory. What is
//! changed through one replica, or under both (a charger moved to another site in the store),
//! is refused by the other within a second: a revoked token, a charger moved out of the
//! caller's reach, a removed site access.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::rest::{accept_invite, create_site, invite, operators_site, uuid_of};
use crate::support::station::Station;
use crate::support::{Api, eventually_within};
use serde_json::json;
use std::time::{Duration, Instant};

/// What the issue allows a change to take to reach every replica.
const WITHIN: Duration = Duration::from_secs(1);
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(10);
/// How long the API may lag behind Kafka (a consumer group join on tansu takes ~3 s).
const API_LAG: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_access_changed_through_one_replica_is_refused_by_the_other_within_a_second() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let replica_b = fleet.add_api_replica().await;
    let added = Instant::now();
    let uuid = fleet.add_charger("KA-1").await;
    fleet
        .wait_until_accepted("KA-1", &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let mut station = Station::connect(&fleet.gateway("gw-a").ocpp_addr, "KA-1", "a")
        .await
        .unwrap_or_else(|e| panic!("KA-1 could not connect: {e:?}"));
    let status = r#"{"connectorId":1,"errorCode":"NoError","status":"Available"}"#;
    station.call_ok("StatusNotification", status).await;

    let owner = fleet.rest().await;
    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    let on_b = Api::at(&replica_b, &fleet.operator_token().await);
    eventually_within(API_LAG, "the connector on replica B", async || {
        let answer = on_b.get(&path).await;
        match answer.status {
            200 => Ok(()),
            _ => Err(format!("{}: {}", answer.status, answer.body)),
        }
    })
    .await;

    // A token used on B (so held there), revoked through A.
    let created = owner
        .expect(
            201,
            "POST",
            "/api/v3/user/tokens",
            Some(&json!({"name": "dashboard", "scopes": ["meter-values:read"]})),
        )
        .await;
    let plain = created["plain_text_token"].as_str().unwrap().to_string();
    let token_id = created["data"]["id"].as_i64().unwrap();
    let dashboard = Api::at(&replica_b, &plain);
    assert_eq!(dashboard.get(&path).await.status, 200);
    owner
        .expect(
            200,
            "DELETE",
            &format!("/api/v3/user/tokens/{token_id}"),
            None,
        )
        .await;
    let revoked = Instant::now();
    dashboard.wait_for_status(&path, 401, revoked, WITHIN).await;

    // A guest team given the charger's site with its sensitive data, read through B.
    let site = operators_site(&owner).await;
    let other_site = uuid_of(&create_site(&owner, "Depot").await);
    let invite_token = invite(
        &owner,
        &site,
        "guest@example.com",
        json!({"data_access": true}),
    )
    .await;
    let guest_token = fleet.guest_token("guest@example.com").await;
    let access = accept_invite(
        &Api::at(&fleet.rest_base, &guest_token),
        &site,
        &invite_token,
    )
    .await;
    let guest_team = access["uuid"].as_str().unwrap().to_string();
    let guest = Api::at(&replica_b, &guest_token);
    assert_eq!(guest.get(&path).await.status, 200, "the guest reads it");

    // The charger moved to a site the guest does not reach: no endpoint does it, the store does.
    let moved_to = format!(
        "UPDATE chargers SET site_id = (SELECT id FROM sites WHERE uuid = '{other_site}') WHERE uuid = '{uuid}'"
    );
    fleet.execute_sql(&moved_to).await;
    let moved = Instant::now();
    guest.wait_for_status(&path, 404, moved, WITHIN).await;
    let moved_back = format!(
        "UPDATE chargers SET site_id = (SELECT id FROM sites WHERE uuid = '{site}') WHERE uuid = '{uuid}'"
    );
    fleet.execute_sql(&moved_back).await;
    let back = Instant::now();
    guest.wait_for_status(&path, 200, back, WITHIN).await;

    // The site access removed through A.
    owner
        .expect(
            200,
            "DELETE",
            &format!("/api/v3/sites/{site}/teams/{guest_team}"),
            None,
        )
        .await;
    let removed = Instant::now();
    guest.wait_for_status(&path, 404, removed, WITHIN).await;
    station.close().await;
}

/// Replicas share the messages topic's partitions in their consumer group, yet each answers
/// every charger's newest reading from its own memory: it follows the topic outside the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_every_replica_answers_every_chargers_newest_reading() {
    let broker = Broker::shared().await;
    let mut fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let replica_b = fleet.add_api_replica().await;
    let token = fleet.operator_token().await;
    let replicas = [
        Api::at(&fleet.rest_base, &token),
        Api::at(&replica_b, &token),
    ];
    // Chargers on several partitions: whichever replica's group member holds each one's, the
    // other must answer it too.
    let identities = ["KL-1", "KL-2", "KL-3", "KL-4"];
    let added = Instant::now();
    let mut uuids = Vec::new();
    for identity in identities {
        uuids.push(fleet.add_charger(identity).await);
    }
    for identity in identities {
        fleet
            .wait_until_accepted(identity, &["gw-a"], added, REGISTRY_PROPAGATION)
            .await;
    }
    for (n, identity) in identities.iter().enumerate() {
        let mut station = Station::connect(&fleet.gateway("gw-a").ocpp_addr, identity, "l")
            .await
            .unwrap_or_else(|e| panic!("{identity} could not connect: {e:?}"));
        for wh in [1000 + n, 2000 + n] {
            let reading = format!(
                r#"{{"connectorId":1,"meterValue":[{{"timestamp":"2026-05-01T10:0{}:00Z","sampledValue":[{{"value":"{wh}"}}]}}]}}"#,
                wh / 1000
            );
            station.call_ok("MeterValues", &reading).await;
        }
        station.close().await;
    }
    for (n, uuid) in uuids.iter().enumerate() {
        let expected = format!(
            r#"{{"connectorId":1,"meterValue":[{{"timestamp":"2026-05-01T10:02:00Z","sampledValue":[{{"value":"{}","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}}]}}]}}"#,
            2000 + n
        );
        for replica in &replicas {
            replica
                .wait_for_latest_meter_value_within(uuid, 1, &expected, API_LAG)
                .await;
        }
    }
}
