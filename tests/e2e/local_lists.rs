//! The chargers' local authorization lists (docs/actions.md, "Local authorisation lists"), end
//! to end: the Python `ocpp` charge point keeps a local list as OCPP 1.6 says, and cms keeps it
//! equal to the tags that apply. The site's opt-in and the tags are written into the store of
//! `cms up` directly (the REST API for them is another branch's), as `cms charger add` writes
//! beside it.

mod kafka;

use crate::support::commanded::CommandedCharger;
use crate::support::{Cms, eventually, on_both_stores};
use cms_store::Store;
use cms_store::local_lists::fixtures::{
    charger_site, put_id_tag, remove_id_tag, set_site_authorization,
};
use serde_json::{Value, json};

/// A charger on a site that keeps lists, the owner team's tags written before it connects.
struct Bench {
    store: Store,
    team: i64,
    charger_id: i64,
    charger: CommandedCharger,
}

impl Bench {
    /// `limits`: its LocalAuthListMaxLength and SendLocalListMaxLength.
    async fn start(cms: &Cms, identity: &str, limits: (u32, u32), tags: &[(&str, &str)]) -> Bench {
        let store = cms.open_store().await;
        cms.add_charger(identity).await;
        let (charger_id, site, team) = charger_site(&store, identity).await.unwrap();
        for (tag, status) in tags {
            put_id_tag(&store, team, tag, status, None, None)
                .await
                .unwrap();
        }
        set_site_authorization(&store, site, "id_tags", true)
            .await
            .unwrap();
        let config = json!({
            "LocalAuthListEnabled": "true",
            "LocalAuthListMaxLength": {"value": limits.0.to_string(), "readonly": true},
            "SendLocalListMaxLength": {"value": limits.1.to_string(), "readonly": true},
        })
        .to_string();
        let charger = CommandedCharger::connect_with(
            &cms.ocpp_url(identity),
            identity,
            &["--config", &config],
        )
        .await;
        Bench {
            store,
            team,
            charger_id,
            charger,
        }
    }

    async fn put(&self, tag: &str, status: &str) {
        put_id_tag(&self.store, self.team, tag, status, None, None)
            .await
            .unwrap();
    }

    async fn wait_list(&mut self, version: impl Into<Option<i64>>, tags: &[(&str, &str)]) -> Value {
        wait_list(&mut self.charger, version.into(), tags).await
    }

    /// The SendLocalList calls that arrived, as (connection, payload).
    fn sent_lists(&mut self) -> Vec<(u64, Value)> {
        self.charger
            .received_of("SendLocalList")
            .into_iter()
            .map(|l| (l["connection"].as_u64().unwrap_or(0), l["payload"].clone()))
            .collect()
    }
}

/// The commanded charge point's `--config` with these LocalAuthListMaxLength and
/// SendLocalListMaxLength.
fn list_configuration(limits: (u32, u32)) -> String {
    json!({
        "LocalAuthListEnabled": "true",
        "LocalAuthListMaxLength": {"value": limits.0.to_string(), "readonly": true},
        "SendLocalListMaxLength": {"value": limits.1.to_string(), "readonly": true},
    })
    .to_string()
}

/// Waits until the charge point holds `version` (any, when `None`) with exactly these tags and
/// statuses.
async fn wait_list(
    charger: &mut CommandedCharger,
    version: Option<i64>,
    tags: &[(&str, &str)],
) -> Value {
    let expected: Vec<Value> = tags
        .iter()
        .map(|(tag, status)| json!({"idTag": tag, "status": status}))
        .collect();
    let what = format!("its local list at version {version:?}: {expected:?}");
    charger
        .wait_for(&what, |l| {
            l.get("local_list").is_some()
                && version.is_none_or(|v| l["local_list"] == v)
                && l["entries"] == Value::Array(expected.clone())
        })
        .await
}

fn entry(tag: &str, status: &str) -> Value {
    json!({"idTag": tag, "idTagInfo": {"status": status}})
}

fn update(version: i64, kind: &str, entries: &[Value]) -> Value {
    json!({"listVersion": version, "updateType": kind, "localAuthorizationList": entries})
}

on_both_stores!(
    the_list_reaches_the_charger_whole_then_changes_follow_as_differential_updates,
    |cms| {
        let mut bench = Bench::start(
            &cms,
            "CP-LL-1",
            (50, 10),
            &[("card-a", "Accepted"), ("card-b", "Blocked")],
        )
        .await;
        bench
            .wait_list(1, &[("card-a", "Accepted"), ("card-b", "Blocked")])
            .await;
        let checks = bench.charger.received_of("GetLocalListVersion");
        assert_eq!(checks.len(), 1, "one version check after connecting");

        bench.put("card-c", "Accepted").await;
        bench
            .wait_list(
                2,
                &[
                    ("card-a", "Accepted"),
                    ("card-b", "Blocked"),
                    ("card-c", "Accepted"),
                ],
            )
            .await;
        remove_id_tag(&bench.store, bench.team, "CARD-A")
            .await
            .unwrap();
        bench.put("card-b", "Accepted").await;
        bench
            .wait_list(None, &[("card-b", "Accepted"), ("card-c", "Accepted")])
            .await;
        let sent = bench.sent_lists();
        let payloads: Vec<&Value> = sent.iter().map(|(_, p)| p).collect();
        assert_eq!(
            payloads[..2],
            [
                &update(
                    1,
                    "Full",
                    &[entry("card-a", "Accepted"), entry("card-b", "Blocked")]
                ),
                &update(2, "Differential", &[entry("card-c", "Accepted")]),
            ],
            "{sent:?}"
        );
        // The removal and the change went in one update or two, as the polls fell.
        let rest: Vec<&Value> = payloads[2..].to_vec();
        let sent_entries: Vec<&Value> = rest
            .iter()
            .flat_map(|p| p["localAuthorizationList"].as_array().unwrap())
            .collect();
        assert!(
            rest.iter().all(|p| p["updateType"] == "Differential"),
            "{rest:?}"
        );
        assert_eq!(
            sent_entries,
            [&json!({"idTag": "card-a"}), &entry("card-b", "Accepted")],
            "removals without idTagInfo, first"
        );
        bench.charger.assert_nothing_unexpected();
        // The charger's answer reaches the store through the bus: a moment after the charger
        // has the list.
        let last = payloads.last().unwrap()["listVersion"].clone();
        let (store, charger_id) = (bench.store.clone(), bench.charger_id);
        eventually("the store to hold the last version sent", async || {
            let held = store
                .local_list_charger(charger_id)
                .await
                .unwrap()
                .unwrap()
                .held;
            if held.version == last {
                Ok(())
            } else {
                Err(format!("held version {}", held.version))
            }
        })
        .await;
        bench.charger.finish().await;
    }
);

#[tokio::test]
async fn a_charger_offline_during_two_changes_gets_both_when_it_returns() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-LL-2", (50, 10), &[("card-a", "Accepted")]).await;
    bench.wait_list(1, &[("card-a", "Accepted")]).await;
    let (store, charger_id) = (bench.store.clone(), bench.charger_id);
    // The charge point prints its list before its answer is written: a disconnect at once
    // could beat the answer, and cms would rightly take the update as unanswered (a full one,
    // after `retry_after`). Away only once cms has the answer.
    eventually("the first list's answer to be stored", async || {
        let (actions, _) = store.actions_page(charger_id, 10, 0).await.unwrap();
        let list = actions.iter().find(|a| a.action == "SendLocalList");
        match list.map(|a| a.status.as_str()) {
            Some("answered") => Ok(()),
            other => Err(format!("SendLocalList {other:?}")),
        }
    })
    .await;
    bench.charger.disconnect().await;
    eventually("the charger to be offline", async || {
        let charger = store.local_list_charger(charger_id).await.unwrap().unwrap();
        match charger.session {
            None => Ok(()),
            Some(session) => Err(format!("still on {session}")),
        }
    })
    .await;
    bench.put("card-a", "Blocked").await;
    bench.put("card-b", "Accepted").await;
    // Time for the keeper to see the changes while the charger is away.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    bench.charger.connect_to(&cms.ocpp_url("CP-LL-2")).await;
    bench
        .wait_list(2, &[("card-a", "Blocked"), ("card-b", "Accepted")])
        .await;
    let sent = bench.sent_lists();
    assert_eq!(
        sent[1..],
        [(
            2,
            update(
                2,
                "Differential",
                &[entry("card-a", "Blocked"), entry("card-b", "Accepted")]
            )
        )],
        "one differential update on the new connection: {sent:?}"
    );
    let checks: Vec<u64> = bench
        .charger
        .received_of("GetLocalListVersion")
        .iter()
        .map(|l| l["connection"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(checks, [1, 2], "the version is checked on each connection");
    bench.charger.finish().await;
}

#[tokio::test]
async fn a_version_mismatch_is_answered_with_a_full_update() {
    let cms = Cms::up().await;
    let mut bench = Bench::start(&cms, "CP-LL-3", (50, 10), &[("card-a", "Accepted")]).await;
    bench.wait_list(1, &[("card-a", "Accepted")]).await;
    // The list changed behind cms's back: the charger holds version 100 now.
    bench.charger.set_local_list_version(100);
    bench.put("card-b", "Accepted").await;
    // cms's differential update (2) is refused; it asks the charger's version and sends a full
    // update numbered past it, which the charger takes.
    bench
        .wait_list(101, &[("card-a", "Accepted"), ("card-b", "Accepted")])
        .await;
    let refused = bench
        .charger
        .wait_received(
            "SendLocalList",
            &update(2, "Differential", &[entry("card-b", "Accepted")]),
        )
        .await;
    let answer = bench.charger.answer_to(&refused["unique_id"]).await;
    assert_eq!(answer["payload"], json!({"status": "VersionMismatch"}));
    let sent = bench.sent_lists();
    assert_eq!(
        sent.last().unwrap().1,
        update(
            101,
            "Full",
            &[entry("card-a", "Accepted"), entry("card-b", "Accepted")]
        ),
        "{sent:?}"
    );
    assert_eq!(bench.charger.received_of("GetLocalListVersion").len(), 2);
    bench.charger.finish().await;
}

#[tokio::test]
async fn a_long_list_is_cut_to_the_chargers_size_and_sent_in_parts() {
    let cms = Cms::up().await;
    let tags = [
        ("card-a", "Accepted"),
        ("card-b", "Accepted"),
        ("card-c", "Blocked"),
        ("card-d", "Accepted"),
        ("card-e", "Accepted"),
    ];
    // Holds 4, takes 2 a call: the Blocked tag is left out, the rest go in two calls.
    let mut bench = Bench::start(&cms, "CP-LL-4", (4, 2), &tags).await;
    bench
        .wait_list(
            2,
            &[
                ("card-a", "Accepted"),
                ("card-b", "Accepted"),
                ("card-d", "Accepted"),
                ("card-e", "Accepted"),
            ],
        )
        .await;
    let sent: Vec<Value> = bench.sent_lists().into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        sent,
        [
            update(
                1,
                "Full",
                &[entry("card-a", "Accepted"), entry("card-b", "Accepted")]
            ),
            update(
                2,
                "Differential",
                &[entry("card-d", "Accepted"), entry("card-e", "Accepted")]
            ),
        ]
    );
    bench.charger.finish().await;
}
