//! The console's sessions, id tags and smart-charging pages (issue 43), and the endpoints they
//! read that the API lacked: a transaction and its energy over time, and a charger's local-list
//! sync state. The pages are driven in Debian's Chromium by the node scenarios of
//! tests/browser/scenarios (sessions.js, id_tags.js, smart_charging.js), which print what they
//! saw, each after signing in through the OAuth pages; these tests assert on it.

use crate::console::{OPERATOR, console_user};
use crate::support::commanded::CommandedCharger;
use crate::support::peer::Peer;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Charger, Cms, eventually, on_both_stores};
use crate::tariffs::{energy_time_flat, transaction_when};
use cms_store::local_lists::fixtures::{charger_site, put_id_tag, set_site_authorization};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// A browser scenario loads the console and a page or two, and checks them with axe-core.
const SCENARIO_LIMIT: Duration = Duration::from_secs(45);

/// A charger on the operators' site priced at 0.30/kWh, 2.00/h and 0.50 a session (+20% VAT),
/// which charged 4 kWh from 10:00 to 10:30 (1 kWh by 10:10, 3 by 10:20): 2.70 excluding VAT,
/// 3.24 including. Its uuid, its transaction's id, and the operator's API.
async fn priced_session(cms: &Cms, identity: &str) -> (String, i64, Api) {
    let api = Api::new(cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let uuid = cms.add_charger(identity).await;
    let tariff = create_tariff(&api, &team, &energy_time_flat("0.30")).await;
    let site = format!("/api/v3/sites/{}", operators_site(&api).await);
    api.expect(200, "PUT", &site, Some(&json!({"tariff_uuid": tariff})))
        .await;
    let mut charger = Charger::connect_and_boot(cms, identity, "1.0").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let start = json!({"connectorId": 1, "idTag": "TAG-CONSOLE", "meterStart": 0,
        "timestamp": "2026-11-20T10:00:00Z"});
    let id = charger.call_result("StartTransaction", start).await["transactionId"]
        .as_i64()
        .expect("a transactionId");
    for (at, wh) in [("10:10", 1000), ("10:20", 3000)] {
        let payload = json!({"connectorId": 1, "transactionId": id, "meterValue": [{
            "timestamp": format!("2026-11-20T{at}:00Z"),
            "sampledValue": [{"value": wh.to_string(),
                "measurand": "Energy.Active.Import.Register", "unit": "Wh"}]}]});
        charger.call_result("MeterValues", payload).await;
    }
    let stop = json!({"transactionId": id, "meterStop": 4000,
        "timestamp": "2026-11-20T10:30:00Z"});
    charger.call_result("StopTransaction", stop).await;
    transaction_when(&api, &uuid, id, "the final cost", |t| {
        t["cost"]["excl_vat"].is_string()
    })
    .await;
    (uuid, id, api)
}

on_both_stores!(
    a_transaction_and_its_energy_over_time_are_read_by_its_id,
    |cms| {
        let (uuid, id, api) = priced_session(&cms, "CP-CONSOLE-TX").await;
        let path = format!("/api/v3/chargers/{uuid}/transactions/{id}");
        let shown = api.get_ok(&path).await;
        let t = &shown["data"];
        assert_eq!(
            (&t["id"], &t["total_kwh"]),
            (&json!(id), &json!("4.00")),
            "{t}"
        );
        assert_eq!(
            (&t["cost"]["excl_vat"], &t["cost"]["incl_vat"]),
            (&json!("2.70"), &json!("3.24"))
        );

        let readings = api.get_ok(&format!("{path}/meter-values")).await;
        let points: Vec<(&str, i64, Value)> = (readings["data"].as_array().expect("data").iter())
            .map(|r| {
                (
                    r["at"].as_str().unwrap_or(""),
                    r["energy_wh"].as_i64().unwrap_or(-1),
                    r["power_w"].clone(),
                )
            })
            .map(|(at, wh, w)| (at.get(11..16).unwrap_or(at), wh, w))
            .collect();
        // Oldest first; the mean power since the reading before (1 kWh in 10 min is 6 kW).
        assert_eq!(
            points,
            [
                ("10:00", 0, Value::Null),
                ("10:10", 1000, json!(6000.0)),
                ("10:20", 3000, json!(12000.0)),
                ("10:30", 4000, json!(6000.0)),
            ],
            "{readings}"
        );
        let newest = api.get_ok(&format!("{path}/meter-values?limit=2")).await;
        assert_eq!(
            newest["data"][0]["energy_charged_wh"], 3000,
            "the newest two: {newest}"
        );
        assert_eq!(newest["data"].as_array().map(Vec::len), Some(2));
        api.expect_invalid("GET", &format!("{path}/meter-values?limit=0"), None)
            .await;
        for unknown in [
            format!("/api/v3/chargers/{uuid}/transactions/{}", id + 1000),
            format!("/api/v3/chargers/{uuid}/transactions/x/meter-values"),
        ] {
            api.expect(404, "GET", &unknown, None).await;
        }
        // Another customer sees neither.
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
        stranger
            .expect(404, "GET", &format!("{path}/meter-values"), None)
            .await;
    }
);

on_both_stores!(
    a_chargers_local_list_state_says_whether_it_holds_the_tags,
    |cms| {
        let store = cms.open_store().await;
        let uuid = cms.add_charger("CP-CONSOLE-LL").await;
        let (_, site, team) = charger_site(&store, "CP-CONSOLE-LL").await.unwrap();
        let api = Api::new(&cms, &cms.operator_token().await);
        let path = format!("/api/v3/chargers/{uuid}/local-list");
        let state = api.get_ok(&path).await;
        assert_eq!(
            (&state["data"]["kept"], &state["data"]["state"]),
            (&json!(false), &json!("not_kept")),
            "{state}"
        );

        put_id_tag(&store, team, "TAG-LL-1", "Accepted", None, None)
            .await
            .unwrap();
        set_site_authorization(&store, site, "id_tags", true)
            .await
            .unwrap();
        let kept = api.get_ok(&path).await;
        assert_eq!(
            (&kept["data"]["state"], &kept["data"]["online"]),
            (&json!("out_of_date"), &json!(false)),
            "{kept}"
        );
        let config = json!({"LocalAuthListEnabled": "true"}).to_string();
        let _charger = CommandedCharger::connect_with(
            &cms.ocpp_url("CP-CONSOLE-LL"),
            "CP-CONSOLE-LL",
            &["--config", &config],
        )
        .await;
        let synced = eventually("the charger holds its list", async || {
            let state = api.get_ok(&path).await;
            match state["data"]["state"] == "in_sync" {
                true => Ok(state),
                false => Err(state.to_string()),
            }
        })
        .await;
        let data = &synced["data"];
        assert_eq!(
            (&data["entries"], &data["desired_entries"], &data["checked"]),
            (&json!(1), &json!(1), &json!(true)),
            "{data}"
        );
        assert!(data["version"].as_i64() >= Some(1), "{data}");
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
        stranger.expect(404, "GET", &path, None).await;
    }
);

/// Runs `tests/browser/scenarios/<scenario>` against `cms`, signed in as the operator, waits
/// for it to end, and returns its result line (`{"page": ...}`, one per page), failing on any
/// problem it reports.
async fn browse(cms: &Cms, scenario: &str, args: Value) -> Vec<Value> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser");
    let script = format!("scenarios/{scenario}");
    let user = console_user(cms, OPERATOR, &[]).await;
    let args = json!({"base": user[0], "email": user[1], "password": user[2], "args": args});
    let args = args.to_string();
    let needs = "node and `npm ci` in tests/browser (scripts/test does both)";
    let mut peer = Peer::start(
        format!("the scenario {scenario}"),
        "node",
        &dir,
        &[&script, &args],
        needs,
    );
    peer.wait_within(SCENARIO_LIMIT, "its end", |l| l.get("done").is_some())
        .await;
    let printed = peer.printed().to_vec();
    let done = printed
        .iter()
        .find(|l| l.get("done").is_some())
        .expect("the end");
    assert_eq!(
        done["problems"],
        json!([]),
        "{scenario}: console errors or accessibility violations: {printed:?}"
    );
    printed
        .into_iter()
        .filter(|l| l.get("page").is_some())
        .collect()
}

fn page<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    (lines.iter().find(|l| l["page"] == name))
        .unwrap_or_else(|| panic!("no {name} page in {lines:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_page_draws_its_energy_with_its_kwh_and_cost() {
    let cms = Cms::up().await;
    let (uuid, id, _) = priced_session(&cms, "CP-CONSOLE-S1").await;
    let lines = browse(
        &cms,
        "sessions.js",
        json!({"session": format!("{uuid}/{id}")}),
    )
    .await;
    let session = page(&lines, "session");
    assert_eq!(
        (&session["kwh"], &session["cost"]),
        (&json!("4.00 kWh"), &json!("3.24 EUR")),
        "{session}"
    );
    assert_eq!(session["canvases"], 1, "the chart is drawn: {session}");
    // The chart's text alternative carries its figures.
    let summary = session["summary"].as_str().unwrap_or("");
    for figure in ["3.00", "4.00", "12.00"] {
        assert!(
            summary.contains(figure),
            "{figure} kWh/kW not in the chart's summary: {summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_list_shows_kwh_and_cost_and_exports_them_as_csv() {
    let cms = Cms::up().await;
    let (uuid, id, api) = priced_session(&cms, "CP-CONSOLE-S2").await;
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let lines = browse(
        &cms,
        "sessions.js",
        json!({"team": team, "row": format!("{uuid}/{id}")}),
    )
    .await;
    let list = page(&lines, "sessions");
    assert_eq!(
        (&list["kwh"], &list["cost"]),
        (&json!("4.00"), &json!("3.24 EUR")),
        "{list}"
    );
    let csv = list["csv"].as_str().unwrap_or("");
    let row = csv
        .lines()
        .find(|l| l.contains("CP-CONSOLE-S2"))
        .unwrap_or_else(|| panic!("no row: {csv}"));
    assert!(row.contains(",4.00,2.70,3.24,EUR"), "{row}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_id_tags_page_lists_a_teams_tags_and_each_chargers_sync_state() {
    let cms = Cms::up().await;
    let store = cms.open_store().await;
    cms.add_charger("CP-CONSOLE-IT").await;
    let (_, site, _) = charger_site(&store, "CP-CONSOLE-IT").await.unwrap();
    set_site_authorization(&store, site, "id_tags", true)
        .await
        .unwrap();
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let tags = format!("/api/v3/teams/{team}/id-tags");
    api.expect(
        201,
        "POST",
        &tags,
        Some(&json!({"id_tag": "TAG-IT-1", "name": "Fleet card"})),
    )
    .await;
    let config = json!({"LocalAuthListEnabled": "true"}).to_string();
    let _charger = CommandedCharger::connect_with(
        &cms.ocpp_url("CP-CONSOLE-IT"),
        "CP-CONSOLE-IT",
        &["--config", &config],
    )
    .await;
    eventually("the charger holds its list", async || {
        let list = api.get_ok("/api/v3/chargers").await;
        let uuid = list["data"][0]["uuid"].as_str().unwrap_or("").to_string();
        let state = api
            .get_ok(&format!("/api/v3/chargers/{uuid}/local-list"))
            .await;
        match state["data"]["state"] == "in_sync" {
            true => Ok(()),
            false => Err(state.to_string()),
        }
    })
    .await;
    let lines = browse(
        &cms,
        "id_tags.js",
        json!({"team": team, "tag": "TAG-IT-1", "charger": "CP-CONSOLE-IT"}),
    )
    .await;
    let page = page(&lines, "id-tags");
    assert_eq!(
        (&page["tag"], &page["tag_status"]),
        (&json!("TAG-IT-1"), &json!("Accepted")),
        "{page}"
    );
    assert_eq!(page["sync"], "In sync (version 1, 1 entry)", "{page}");
    // A tag added from the page is in the team's list.
    assert_eq!(page["added"], "TAG-IT-NEW", "{page}");
    api.expect(200, "GET", &format!("{tags}/TAG-IT-NEW"), None)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_smart_charging_page_shows_the_sites_limit_and_a_connectors_allocation() {
    let cms = Cms::up().await;
    cms.add_charger("CP-CONSOLE-SC").await;
    cms.license("CP-CONSOLE-SC", true, false).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = operators_site(&api).await;
    let settings = format!("/api/v3/sites/{site}/smart-charging");
    api.expect(
        200,
        "PUT",
        &settings,
        Some(&json!({"mode": "static", "grid_limit_amps": 20, "fail_safe_amps": 8})),
    )
    .await;
    let mut charger =
        CommandedCharger::connect(&cms.ocpp_url("CP-CONSOLE-SC"), "CP-CONSOLE-SC").await;
    let started = charger.send("start 1 TAG-SC").await;
    assert_eq!(started["idTagInfo"]["status"], "Accepted", "{started}");
    eventually("the connector's allocation", async || {
        let status = api.get_ok(&format!("{settings}/status")).await;
        let connectors = status["data"]["connectors"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match connectors
            .iter()
            .any(|c| c["connector_id"] == 1 && c["limit_amps"] == json!(20.0))
        {
            true => Ok(()),
            false => Err(status.to_string()),
        }
    })
    .await;
    let lines = browse(
        &cms,
        "smart_charging.js",
        json!({"site": site, "connector": "CP-CONSOLE-SC/1"}),
    )
    .await;
    let sites = page(&lines, "sites");
    assert_eq!(
        sites["link"],
        format!("#/sites/{site}/smart-charging"),
        "{sites}"
    );
    let page = page(&lines, "smart-charging");
    assert_eq!(page["limit"], "20 A", "{page}");
    assert_eq!(page["allocation"], "20 A", "{page}");
    assert_eq!(page["canvases"], 1, "the chart is drawn: {page}");
}
