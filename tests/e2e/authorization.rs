//! Who may charge (docs/api.md "Id tags"): a third-party charge point, the Python `ocpp` package
//! (tests/interop/ocpp16_commanded_charge_point.py), sends Authorize, StartTransaction and
//! StopTransaction; the gateway answers from the id tags the REST API manages, in `cms up` and
//! with a gateway that shares only Kafka with the API.

use crate::support::broker::Broker;
use crate::support::commanded::CommandedCharger;
use crate::support::fleet::Fleet;
use crate::support::rest::{invite_guest, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Cms, eventually};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What the issue promises: a change made through the API reaches the gateways within this.
const PROPAGATION: Duration = Duration::from_secs(2);

/// The idTagInfo cms answered an Authorize of `tag` with.
async fn authorize(charger: &mut CommandedCharger, tag: &str) -> Value {
    charger.send(&format!("authorize {tag}")).await["idTagInfo"].clone()
}

/// Authorizes `tag` until cms answers `status`; how long that took. Fails after `limit`.
async fn until_status(
    charger: &mut CommandedCharger,
    tag: &str,
    status: &str,
    limit: Duration,
) -> Duration {
    let since = Instant::now();
    loop {
        let info = authorize(charger, tag).await;
        if info["status"] == status {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < limit,
            "Authorize {tag} still answered {info} after {limit:?}, expected {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn tag_path(team: &str, tag: &str) -> String {
    format!("/api/v3/teams/{team}/id-tags/{tag}")
}

async fn add_tag(api: &Api, team: &str, tag: Value) {
    let path = format!("/api/v3/teams/{team}/id-tags");
    api.expect(201, "POST", &path, Some(&tag)).await;
}

async fn set_authorization(api: &Api, site: &str, mode: &str) {
    let body = json!({"authorization": mode});
    let path = format!("/api/v3/sites/{site}");
    let answer = api.expect(200, "PUT", &path, Some(&body)).await;
    assert_eq!(answer["data"]["authorization"], mode, "{answer}");
}

/// Two chargers of the operators' site, each with the commanded charge point connected.
struct Bench {
    api: Api,
    site: String,
    team: String,
    chargers: [CommandedCharger; 2],
    uuids: [String; 2],
}

impl Bench {
    async fn start(cms: &Cms, identities: [&str; 2]) -> Bench {
        let mut uuids = Vec::new();
        for identity in identities {
            uuids.push(cms.add_charger(identity).await);
        }
        let api = Api::new(cms, &cms.operator_token().await);
        let site = operators_site(&api).await;
        let team = uuid_of(&team_of_type(&api, "operators").await);
        let [a, b] = identities;
        let chargers = [
            CommandedCharger::connect(&cms.ocpp_url(a), a).await,
            CommandedCharger::connect(&cms.ocpp_url(b), b).await,
        ];
        Bench {
            api,
            site,
            team,
            chargers,
            uuids: uuids.try_into().expect("two uuids"),
        }
    }

    async fn finish(self) {
        for charger in self.chargers {
            charger.finish().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_answers_each_tag_as_the_team_set_it() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, ["CP-TAGS-1", "CP-TAGS-2"]).await;
    let (api, team) = (&bench.api, bench.team.clone());
    let [one, two] = &mut bench.chargers;
    assert_eq!(
        authorize(one, "ANYONE").await,
        json!({"status": "Accepted"}),
        "a site is open until told otherwise"
    );
    let past = "2020-01-01T00:00:00Z";
    let future = "2099-01-01T00:00:00Z";
    for tag in [
        json!({"id_tag": "good-1", "parent_id_tag": "FLEET-1", "expiry_date": future}),
        json!({"id_tag": "LOST-1", "status": "Blocked"}),
        json!({"id_tag": "OLD-1", "status": "Expired"}),
        json!({"id_tag": "BAD-1", "status": "Invalid"}),
        json!({"id_tag": "LATE-1", "expiry_date": past}),
    ] {
        add_tag(api, &team, tag).await;
    }
    set_authorization(api, &bench.site, "id_tags").await;
    until_status(one, "STRANGER", "Invalid", PROPAGATION * 2).await;

    assert_eq!(
        authorize(one, "GOOD-1").await,
        json!({"status": "Accepted", "parentIdTag": "FLEET-1", "expiryDate": future}),
        "tags compare case-insensitively and carry their parent and expiry"
    );
    for (tag, status) in [
        ("LOST-1", "Blocked"),
        ("old-1", "Expired"),
        ("BAD-1", "Invalid"),
        ("LATE-1", "Expired"),
        ("NOBODY", "Invalid"),
    ] {
        assert_eq!(authorize(one, tag).await["status"], status, "{tag}");
    }

    // A tag charging at one charger is ConcurrentTx at the other until its session stops.
    let started = one.send("start 1 good-1").await;
    assert_eq!(started["idTagInfo"]["status"], "Accepted", "{started}");
    let transaction = started["transactionId"].as_i64().expect("a transactionId");
    assert_eq!(authorize(two, "GOOD-1").await["status"], "ConcurrentTx");
    let stopped = one.send(&format!("stop {transaction} good-1")).await;
    assert_eq!(stopped["idTagInfo"]["status"], "Accepted", "{stopped}");
    assert_eq!(authorize(two, "GOOD-1").await["status"], "Accepted");

    // A refused start still gets a transactionId, and is recorded with the refusal.
    let refused = two.send("start 2 LOST-1").await;
    assert_eq!(refused["idTagInfo"]["status"], "Blocked", "{refused}");
    let refused_id = refused["transactionId"].as_i64().expect("a transactionId");
    let path = format!("/api/v3/chargers/{}/transactions", bench.uuids[1]);
    let recorded = eventually("the refused transaction in the API", async || {
        let page = api.get_ok(&path).await;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        data.into_iter()
            .find(|t| t["id"] == refused_id)
            .ok_or(format!("not yet: {page}"))
    })
    .await;
    assert_eq!(recorded["id_tag_status"], "Blocked", "{recorded}");
    assert_eq!(recorded["id_tag"], "LOST-1");

    // Blocked through the API: refused at the charger's next Authorize within two seconds.
    let blocked = json!({"status": "Blocked"});
    api.expect(200, "PUT", &tag_path(&team, "good-1"), Some(&blocked))
        .await;
    let took = until_status(one, "good-1", "Blocked", PROPAGATION).await;
    eprintln!("a blocked tag was refused {took:?} after the API call");

    api.expect(200, "DELETE", &tag_path(&team, "LOST-1"), None)
        .await;
    until_status(one, "LOST-1", "Invalid", PROPAGATION).await;

    set_authorization(api, &bench.site, "open").await;
    until_status(two, "NOBODY", "Accepted", PROPAGATION).await;
    bench.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tags_of_a_team_with_access_to_the_site_apply_there() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, ["CP-GUEST-1", "CP-GUEST-2"]).await;
    let (api, site) = (&bench.api, bench.site.clone());
    add_tag(api, &bench.team, json!({"id_tag": "OWNERS"})).await;
    let body = json!({"transfer_ownership": false, "data_access": false});
    let guest = invite_guest(&cms, api, &site, "guest@partner.example", body).await;
    let guest_team = uuid_of(&team_of_type(&guest, "personal").await);
    add_tag(&guest, &guest_team, json!({"id_tag": "PARTNER-7"})).await;
    // A tag the owner blocked but the guest team accepts: the guest's driver may charge.
    add_tag(
        api,
        &bench.team,
        json!({"id_tag": "SHARED", "status": "Blocked"}),
    )
    .await;
    add_tag(&guest, &guest_team, json!({"id_tag": "SHARED"})).await;
    set_authorization(api, &site, "id_tags").await;

    let [one, _] = &mut bench.chargers;
    until_status(one, "STRANGER", "Invalid", PROPAGATION * 2).await;
    assert_eq!(authorize(one, "OWNERS").await["status"], "Accepted");
    assert_eq!(authorize(one, "PARTNER-7").await["status"], "Accepted");
    assert_eq!(authorize(one, "SHARED").await["status"], "Accepted");
    bench.finish().await;
}

/// `cms gateway` shares only Kafka with `cms api`: a tag blocked through the API is refused at
/// the gateway's next Authorize within two seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_apart_from_the_api_learns_a_blocked_tag_within_two_seconds() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-tags"]).await;
    let identity = "CP-KAFKA-TAGS";
    let added = Instant::now();
    fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &["gw-tags"], added, Duration::from_secs(10))
        .await;
    let api = fleet.rest().await;
    let site = operators_site(&api).await;
    let team = uuid_of(&team_of_type(&api, "operators").await);
    add_tag(
        &api,
        &team,
        json!({"id_tag": "DRIVER-1", "parent_id_tag": "FLEET-K"}),
    )
    .await;
    add_tag(
        &api,
        &team,
        json!({"id_tag": "LATE-1", "expiry_date": "2020-01-01T00:00:00Z"}),
    )
    .await;
    add_tag(&api, &team, json!({"id_tag": "BAD-1", "status": "Invalid"})).await;
    set_authorization(&api, &site, "id_tags").await;
    let addr = &fleet.gateway("gw-tags").ocpp_addr;
    let url = format!("ws://{addr}/ocpp/{identity}");
    let mut charger = CommandedCharger::connect(&url, identity).await;
    // The first change also waits for the API's publisher and the gateway's consumer to start.
    until_status(&mut charger, "STRANGER", "Invalid", Duration::from_secs(15)).await;
    assert_eq!(
        authorize(&mut charger, "driver-1").await,
        json!({"status": "Accepted", "parentIdTag": "FLEET-K"})
    );
    assert_eq!(authorize(&mut charger, "LATE-1").await["status"], "Expired");
    assert_eq!(authorize(&mut charger, "BAD-1").await["status"], "Invalid");

    let blocked = json!({"status": "Blocked"});
    api.expect(200, "PUT", &tag_path(&team, "DRIVER-1"), Some(&blocked))
        .await;
    let took = until_status(&mut charger, "DRIVER-1", "Blocked", PROPAGATION).await;
    eprintln!("the gateway refused a blocked tag {took:?} after the API call");
    charger.finish().await;
}
