//! The fleet at a glance (issue 43, docs/api.md "Fleet overview"): `GET /api/v3/overview`
//! counts what the caller's chargers say, live; `GET /api/v3/chargers/stream` pushes the
//! caller's changed chargers (never another team's); `GET /api/v3/chargers` filters by
//! search, site, status and protocol, refusing a bad value; a silent charger is listed stale.

use crate::support::rest::{create_site, operators_site, uuid_of};
use crate::support::{Api, Charger, Cms, Handshake, boot_payload, eventually, on_both_stores};
use serde_json::{Value, json};
use std::time::Duration;

const PASSWORD: &str = "guest-charger-pw-0001";

/// Reports `status` for `connector` of `charger`.
async fn report(charger: &mut Charger, connector: u32, status: &str) {
    let error = if status == "Faulted" {
        "GroundFailure"
    } else {
        "NoError"
    };
    let body = json!({"connectorId": connector, "errorCode": error, "status": status});
    charger.call_result("StatusNotification", body).await;
}

/// A guest (another customer) with a site of their own and one charger in it, registered
/// with a password; returns their client, the site's uuid and the charger's uuid.
async fn guest_with_charger(cms: &Cms, identity: &str) -> (Api, String, String) {
    let guest = Api::new(cms, &cms.guest_token("guest@example.com").await);
    let site = uuid_of(&create_site(&guest, "Guest depot").await);
    let body = json!({"identity": identity, "password": PASSWORD});
    let path = format!("/api/v3/sites/{site}/chargers");
    let charger = guest.expect(201, "POST", &path, Some(&body)).await;
    (guest, site, uuid_of(&charger["data"]))
}

async fn connect_guest_charger(cms: &Cms, identity: &str) -> Charger {
    let mut charger = Handshake::new(cms, identity)
        .basic_auth(identity, PASSWORD)
        .open()
        .await
        .unwrap_or_else(|e| panic!("{identity} could not connect: {e}"));
    charger
        .call_result("BootNotification", boot_payload("1.0.0"))
        .await;
    charger
}

/// Waits until the caller's overview (at `path`) satisfies `wanted`; returns it.
async fn overview_where(api: &Api, path: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    eventually("the overview to show it", async || {
        let answer = api.get(path).await;
        match answer.status == 200 && wanted(&answer.json["data"]) {
            true => Ok(answer.json["data"].clone()),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await
}

fn counts(overview: &Value) -> (i64, i64, i64, i64) {
    let c = &overview["chargers"];
    let n = |k: &str| c[k].as_i64().unwrap_or(-1);
    (n("total"), n("online"), n("offline"), n("faulted"))
}

on_both_stores!(overview_counts_the_callers_chargers_as_they_report, |cms| {
    let operator = Api::new(&cms, &cms.operator_token().await);
    cms.add_charger("FLEET-A").await;
    cms.add_charger("FLEET-B").await;
    let (guest, guest_site, _) = guest_with_charger(&cms, "FLEET-G").await;
    let first = overview_where(&operator, "/api/v3/overview", |o| counts(o) == (2, 0, 2, 0)).await;
    assert_eq!(first["sessions"]["active"], 0, "{first}");
    assert_eq!(first["stale_total"], 0, "{first}");

    let mut a = Charger::connect_and_boot(&cms, "FLEET-A", "1.0.0").await;
    report(&mut a, 1, "Available").await;
    report(&mut a, 2, "Faulted").await;
    let seen = overview_where(&operator, "/api/v3/overview", |o| counts(o) == (2, 1, 1, 1)).await;
    assert_eq!(seen["connectors"]["Available"], 1, "{seen}");
    assert_eq!(seen["connectors"]["Faulted"], 1, "{seen}");

    // The guest sees their own charger alone, untouched by the operators' fault.
    let mut g = connect_guest_charger(&cms, "FLEET-G").await;
    report(&mut g, 1, "Charging").await;
    let theirs = overview_where(&guest, "/api/v3/overview", |o| counts(o) == (1, 1, 0, 0)).await;
    assert_eq!(theirs["connectors"], json!({"Charging": 1}), "{theirs}");
    // A site's overview: the guest's own, and to the operators (who do not reach it) nothing.
    let of_site = format!("/api/v3/overview?filter[site_uuid]={guest_site}");
    let guest_site_only = overview_where(&guest, &of_site, |o| counts(o).0 == 1).await;
    assert_eq!(counts(&guest_site_only), (1, 1, 0, 0), "{guest_site_only}");
    let not_theirs = operator.get_ok(&of_site).await;
    assert_eq!(counts(&not_theirs["data"]), (0, 0, 0, 0), "{not_theirs}");
    let bad = guest.get("/api/v3/overview?filter[site_uuid]=nope").await;
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert!(
        bad.json["errors"]["filter.site_uuid"].is_array(),
        "{}",
        bad.body
    );

    // The fault cleared: the count goes back.
    report(&mut a, 2, "Available").await;
    overview_where(&operator, "/api/v3/overview", |o| counts(o) == (2, 1, 1, 0)).await;
});

/// An SSE response read event by event: the data of each `chargers` event.
struct ChargersStream {
    response: reqwest::Response,
    pending: String,
}

impl ChargersStream {
    async fn open(cms: &Cms, token: &str) -> ChargersStream {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let response = client
            .get(cms.http_url("/api/v3/chargers/stream"))
            .header("Authorization", format!("Bearer {token}"))
            .send()
            .await
            .expect("the stream opens");
        assert_eq!(response.status(), 200);
        ChargersStream {
            response,
            pending: String::new(),
        }
    }

    /// Every charger the `chargers` events of the next `window` carried, by identity, latest
    /// last.
    async fn during(&mut self, window: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + window;
        let mut seen = Vec::new();
        loop {
            while let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                if block.lines().any(|l| l.trim() == "event: chargers") {
                    let data = block.lines().find_map(|l| l.strip_prefix("data:"));
                    let data: Value = serde_json::from_str(data.unwrap().trim()).unwrap();
                    seen.extend(data.as_array().unwrap().iter().cloned());
                }
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(bytes))) => self.pending.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return seen,
            }
        }
    }
}

#[tokio::test]
async fn the_chargers_stream_pushes_the_callers_changes_and_never_another_teams() {
    let cms = Cms::up().await;
    let operator_token = cms.operator_token().await;
    let a_uuid = cms.add_charger("STREAM-A").await;
    let (guest, _, g_uuid) = guest_with_charger(&cms, "STREAM-G").await;
    drop(guest);
    let guest_token = cms.guest_token("guest@example.com").await;
    let mut operators = ChargersStream::open(&cms, &operator_token).await;
    let mut guests = ChargersStream::open(&cms, &guest_token).await;

    let mut a = Charger::connect_and_boot(&cms, "STREAM-A", "1.0.0").await;
    report(&mut a, 1, "Faulted").await;
    let mut g = connect_guest_charger(&cms, "STREAM-G").await;
    report(&mut g, 1, "Preparing").await;

    let seen = operators.during(Duration::from_secs(4)).await;
    let last_a = seen.iter().rev().find(|c| c["uuid"] == a_uuid.as_str());
    let last_a = last_a.unwrap_or_else(|| panic!("no change of STREAM-A: {seen:?}"));
    assert_eq!(last_a["identity"], "STREAM-A");
    assert_eq!(last_a["online"], true, "{last_a}");
    assert_eq!(
        last_a["connectors"],
        json!([{"connector_id": 1, "status": "Faulted"}]),
        "{last_a}"
    );
    assert!(last_a["last_message_at"].is_string(), "{last_a}");

    let theirs = guests.during(Duration::from_secs(2)).await;
    assert!(
        theirs.iter().any(|c| c["uuid"] == g_uuid.as_str()),
        "the guest's own change: {theirs:?}"
    );
    assert!(
        theirs.iter().all(|c| c["uuid"] == g_uuid.as_str()),
        "another team's charger reached the guest: {theirs:?}"
    );
}

on_both_stores!(the_chargers_list_filters_and_refuses_a_bad_filter, |cms| {
    let operator = Api::new(&cms, &cms.operator_token().await);
    cms.add_charger("FILTER-FAULTY").await;
    cms.add_charger("FILTER-FINE").await;
    cms.add_charger("FILTER-IDLE").await;
    let (_, guest_site, _) = guest_with_charger(&cms, "FILTER-GUEST").await;
    let mut faulty = Charger::connect_and_boot(&cms, "FILTER-FAULTY", "1.0.0").await;
    report(&mut faulty, 1, "Faulted").await;
    let mut fine = Charger::connect_and_boot(&cms, "FILTER-FINE", "1.0.0").await;
    report(&mut fine, 1, "Available").await;

    let identities = async |query: &str| -> Vec<String> {
        let list = operator.get_ok(&format!("/api/v3/chargers?{query}")).await;
        let mut found: Vec<String> = list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["identity"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        let to = list["meta"]["to"].as_i64().unwrap_or(0);
        assert_eq!(to, found.len() as i64, "{list}");
        found
    };
    eventually(
        "the faulted charger to be found",
        async || match identities("filter[status]=faulted").await.as_slice() {
            [only] if only == "FILTER-FAULTY" => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;
    assert_eq!(
        identities("filter[status]=online").await,
        ["FILTER-FAULTY", "FILTER-FINE"]
    );
    // The guest's charger is not the operators' to see.
    assert_eq!(identities("filter[status]=offline").await, ["FILTER-IDLE"]);
    assert_eq!(identities("filter[search]=fIlTeR-f").await.len(), 2);
    assert_eq!(identities("filter[search]=idle").await, ["FILTER-IDLE"]);
    assert_eq!(
        identities("filter[ocpp_version]=1.6").await,
        ["FILTER-FAULTY", "FILTER-FINE"]
    );
    assert!(identities("filter[ocpp_version]=2.0.1").await.is_empty());
    let own_site = operators_site(&operator).await;
    assert_eq!(
        identities(&format!("filter[site_uuid]={own_site}"))
            .await
            .len(),
        3
    );
    assert!(
        identities(&format!("filter[site_uuid]={guest_site}"))
            .await
            .is_empty()
    );
    assert_eq!(
        identities("filter[status]=online&filter[search]=fine").await,
        ["FILTER-FINE"]
    );
    // A site's list takes the same filters.
    let site_list = operator
        .get_ok(&format!(
            "/api/v3/sites/{own_site}/chargers?filter[status]=faulted"
        ))
        .await;
    assert_eq!(
        site_list["data"].as_array().unwrap().len(),
        1,
        "{site_list}"
    );
    assert_eq!(site_list["data"][0]["identity"], "FILTER-FAULTY");

    for (query, field) in [
        ("filter[status]=broken", "filter.status"),
        ("filter[ocpp_version]=1.5", "filter.ocpp_version"),
        ("filter[site_uuid]=not-a-uuid", "filter.site_uuid"),
        ("filter[colour]=red", "filter.colour"),
    ] {
        let answer = operator.get(&format!("/api/v3/chargers?{query}")).await;
        assert_eq!(answer.status, 422, "{query}: {}", answer.body);
        assert!(answer.json["message"].is_string(), "{}", answer.body);
        assert!(
            answer.json["errors"][field].is_array(),
            "{query}: {}",
            answer.body
        );
    }
});

#[tokio::test]
async fn a_silent_charger_is_listed_stale_until_it_speaks_again() {
    let cms = Cms::up_with(&["--heartbeat-interval", "1s"]).await;
    let operator = Api::new(&cms, &cms.operator_token().await);
    let uuid = cms.add_charger("SILENT-1").await;
    let mut charger = Charger::connect_and_boot(&cms, "SILENT-1", "1.0.0").await;
    report(&mut charger, 1, "Available").await;
    let stale = overview_where(&operator, "/api/v3/overview", |o| o["stale_total"] == 1).await;
    let listed = &stale["stale"][0];
    assert_eq!(listed["uuid"], uuid.as_str(), "{stale}");
    assert_eq!(listed["identity"], "SILENT-1");
    assert_eq!(listed["heartbeat_interval"], 1);
    assert!(listed["last_message_at"].is_string(), "{stale}");
    // Still online: silent, not gone.
    assert_eq!(stale["chargers"]["online"], 1, "{stale}");
    charger.heartbeat().await;
    overview_where(&operator, "/api/v3/overview", |o| o["stale_total"] == 0).await;
}
