//! Local authorisation lists of a 2.0.1 station (docs/ocpp201.md, "Local authorisation
//! lists"), end to end: the Python `ocpp` v201 station (tests/interop/ocpp201_lists.py, its
//! schema validation on) keeps the list it is sent; cms keeps it equal to the site's tags, in
//! parts within the station's ItemsPerMessage, across a version mismatch and an absence. The
//! tags and the site's opt-in are written into the store directly, as tests/e2e/local_lists.rs
//! does.

use super::require_python_packages;
use crate::support::peer::Peer;
use crate::support::station201::python_station;
use crate::support::{Cms, eventually};
use cms_store::Store;
use cms_store::local_lists::fixtures::{
    charger_site, put_id_tag, remove_id_tag, set_site_authorization,
};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a list may take to reach the station.
const LISTED: Duration = Duration::from_secs(30);
/// The station's ItemsPerMessage (ocpp201_lists.py's ITEMS_PER_MESSAGE).
const ITEMS_PER_MESSAGE: usize = 2;

/// The station with its site's tags: `tags` written before it connects.
pub(crate) struct ListBench {
    pub store: Store,
    pub team: i64,
    pub charger_id: i64,
    pub station: Peer,
}

impl ListBench {
    /// Writes `tags` for the charger `identity` (registered), turns its site to id tags that
    /// keep lists, and starts the station on `url`.
    pub async fn start(store: Store, url: &str, identity: &str, tags: &[(&str, &str)]) -> Self {
        let (charger_id, site, team) = charger_site(&store, identity).await.unwrap();
        for (tag, status) in tags {
            put_id_tag(&store, team, tag, status, None, None)
                .await
                .unwrap();
        }
        set_site_authorization(&store, site, "id_tags", true)
            .await
            .unwrap();
        let station = python_station(url, identity, "lists", &["--for", "90"]);
        ListBench {
            store,
            team,
            charger_id,
            station,
        }
    }

    pub async fn put(&self, tag: &str, status: &str) {
        put_id_tag(&self.store, self.team, tag, status, None, None)
            .await
            .unwrap();
    }

    /// Waits until the station holds exactly `tags` (at `version`, when given).
    pub async fn listed(&mut self, version: Option<i64>, tags: &[(&str, &str)]) -> Value {
        let expected: Vec<Value> = tags
            .iter()
            .map(|(tag, status)| json!({"idToken": tag, "type": "ISO14443", "status": status}))
            .collect();
        let what = format!("its local list at version {version:?}: {expected:?}");
        self.station
            .wait_within(LISTED, &what, |l| {
                l.get("local_list").is_some()
                    && version.is_none_or(|v| l["local_list"] == v)
                    && l["entries"] == Value::Array(expected.clone())
            })
            .await
    }

    /// The calls `action` cms sent, as (connection, payload).
    pub fn received(&mut self, action: &str) -> Vec<(u64, Value)> {
        (self.station.lines_where("received", action).into_iter())
            .map(|l| (l["connection"].as_u64().unwrap_or(0), l["payload"].clone()))
            .collect()
    }
}

pub(crate) fn entry(tag: &str, status: &str) -> Value {
    json!({"idToken": {"idToken": tag, "type": "ISO14443"}, "idTokenInfo": {"status": status}})
}

pub(crate) fn update(version: i64, kind: &str, entries: &[Value]) -> Value {
    json!({"versionNumber": version, "updateType": kind, "localAuthorizationList": entries})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_keeps_the_sites_tags_in_parts_across_a_mismatch_and_an_absence() {
    require_python_packages().await;
    let cms = Cms::up().await;
    let identity = "CP-201-LL";
    cms.add_charger(identity).await;
    let tags = [
        ("card-a", "Accepted"),
        ("card-b", "Blocked"),
        ("card-c", "Accepted"),
    ];
    let store = cms.open_store().await;
    let mut bench = ListBench::start(store, &cms.ocpp_url(identity), identity, &tags).await;

    // The whole list, in parts of ItemsPerMessage: known from the base report, which the
    // version check waited for.
    bench.listed(Some(2), &tags).await;
    let sent = bench.received("SendLocalList");
    assert_eq!(
        sent,
        [
            (
                1,
                update(
                    1,
                    "Full",
                    &[entry("card-a", "Accepted"), entry("card-b", "Blocked")]
                )
            ),
            (1, update(2, "Differential", &[entry("card-c", "Accepted")])),
        ]
    );
    let printed = bench.station.printed().to_vec();
    let position = |wanted: &dyn Fn(&Value) -> bool| printed.iter().position(wanted);
    let report_ended = position(&|l| l["sent"] == "NotifyReport" && l["payload"]["tbc"].is_null());
    let checked = position(&|l| l["received"] == "GetLocalListVersion");
    assert!(
        report_ended.is_some() && report_ended < checked,
        "the version check after the base report's end: {printed:?}"
    );

    // A tag added, another blocked: differential updates.
    bench.put("card-d", "Accepted").await;
    bench.put("card-a", "Blocked").await;
    let now = [
        ("card-a", "Blocked"),
        ("card-b", "Blocked"),
        ("card-c", "Accepted"),
        ("card-d", "Accepted"),
    ];
    bench.listed(None, &now).await;
    let later = &bench.received("SendLocalList")[2..];
    assert!(
        later.iter().all(|(_, p)| p["updateType"] == "Differential"),
        "{later:?}"
    );

    // The list changed behind cms's back: the station is at version 100. cms's next
    // differential update is refused; it checks the version and sends a full update past it.
    bench.station.command("version 100");
    bench
        .station
        .wait_within(LISTED, "version 100 set", |l| l["list_version_set"] == 100)
        .await;
    bench.put("card-e", "Accepted").await;
    let now = [
        ("card-a", "Blocked"),
        ("card-b", "Blocked"),
        ("card-c", "Accepted"),
        ("card-d", "Accepted"),
        ("card-e", "Accepted"),
    ];
    bench.listed(None, &now).await;
    let answers = bench.station.lines_where("answered", "SendLocalList");
    assert!(
        answers
            .iter()
            .any(|a| a["payload"] == json!({"status": "VersionMismatch"})),
        "{answers:?}"
    );
    let full = bench.received("SendLocalList");
    let full: Vec<&Value> = full
        .iter()
        .map(|(_, p)| p)
        .filter(|p| p["updateType"] == "Full")
        .collect();
    assert_eq!(
        full.len(),
        2,
        "the first, and one after the mismatch: {full:?}"
    );
    assert_eq!(full[1]["versionNumber"], 101, "{full:?}");
    // Then the rest of the list in two differential parts (102, 103).
    assert_eq!(bench.received("GetLocalListVersion").len(), 2);

    // Offline while an accepted tag is removed and another added: caught up on its return, and
    // its authorisation cache (on) cleared after, so that it cannot accept the removed tag.
    let (store, charger_id) = (bench.store.clone(), bench.charger_id);
    eventually("the last update's answer to be stored", async || {
        let (actions, _) = store.actions_page(charger_id, 10, 0).await.unwrap();
        let last = actions.iter().find(|a| a.action == "SendLocalList");
        match last.map(|a| a.status.as_str()) {
            Some("answered") => Ok(()),
            other => Err(format!("SendLocalList {other:?}")),
        }
    })
    .await;
    bench.station.command("disconnect");
    eventually("the station to be offline", async || {
        let charger = store.local_list_charger(charger_id).await.unwrap().unwrap();
        match charger.session {
            None => Ok(()),
            Some(session) => Err(format!("still on {session}")),
        }
    })
    .await;
    remove_id_tag(&bench.store, bench.team, "card-c")
        .await
        .unwrap();
    bench.put("card-f", "Accepted").await;
    // Time for the keeper to see the changes while the station is away.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    bench.station.command("connect");
    bench
        .listed(
            None,
            &[
                ("card-a", "Blocked"),
                ("card-b", "Blocked"),
                ("card-d", "Accepted"),
                ("card-e", "Accepted"),
                ("card-f", "Accepted"),
            ],
        )
        .await;
    let on_return: Vec<Value> = (bench.received("SendLocalList").into_iter())
        .filter(|(connection, _)| *connection == 2)
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        on_return,
        [update(
            104,
            "Differential",
            &[
                json!({"idToken": {"idToken": "card-c", "type": "ISO14443"}}),
                entry("card-f", "Accepted")
            ]
        )],
        "the removal without idTokenInfo, first"
    );
    let checks: Vec<u64> = (bench.received("GetLocalListVersion").into_iter())
        .map(|(connection, _)| connection)
        .collect();
    assert_eq!(checks, [1, 1, 2], "checked again on its return");
    let cleared = bench
        .station
        .wait_within(LISTED, "a ClearCache", |l| l["received"] == "ClearCache")
        .await;
    assert_eq!(cleared["connection"], 2, "{cleared}");
    let printed = bench.station.printed().to_vec();
    let last_list = printed
        .iter()
        .rposition(|l| l["received"] == "SendLocalList");
    let clear = printed.iter().position(|l| l["received"] == "ClearCache");
    assert!(clear > last_list, "after the list is in step: {printed:?}");
    assert_eq!(bench.received("ClearCache").len(), 1, "once");
    for (_, payload) in bench.received("SendLocalList") {
        let entries = payload["localAuthorizationList"]
            .as_array()
            .map_or(0, Vec::len);
        assert!(entries <= ITEMS_PER_MESSAGE, "{payload}");
    }
    bench.station.finish(Duration::from_secs(10)).await;
}
