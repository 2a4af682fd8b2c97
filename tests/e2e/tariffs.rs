//! Tariffs and the cost of transactions (docs/tariffs.md), end to end: a team's tariffs through
//! the REST API, a site priced with one, and the Python `ocpp` charge point
//! (tests/interop/ocpp16_commanded_charge_point.py) charging under it, with the charger's own
//! timestamps, so an hour's session takes a second. The costs are worked by hand below.

use crate::support::commanded::CommandedCharger;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Cms, eventually};
use serde_json::{Value, json};

pub(crate) fn tariffs_path(team: &str) -> String {
    format!("/api/v3/teams/{team}/tariffs")
}

/// ENERGY 0.30/kWh, TIME 2.00/h and a 0.50 start fee, each with 20% VAT.
pub(crate) fn energy_time_flat(energy_price: &str) -> Value {
    json!({
        "name": "Standard",
        "currency": "EUR",
        "elements": [{"price_components": [
            {"type": "ENERGY", "price": energy_price, "vat": 20, "step_size": 1},
            {"type": "TIME", "price": "2.00", "vat": 20, "step_size": 1},
            {"type": "FLAT", "price": "0.50", "vat": 20, "step_size": 1}
        ]}]
    })
}

/// ENERGY 0.20/kWh until 18:00 and 0.40/kWh from 18:00, no VAT.
fn evening_peak() -> Value {
    json!({
        "name": "Evening peak",
        "currency": "EUR",
        "elements": [
            {"price_components": [{"type": "ENERGY", "price": "0.20", "vat": null, "step_size": 1}],
             "restrictions": {"end_time": "18:00"}},
            {"price_components": [{"type": "ENERGY", "price": "0.40", "vat": null, "step_size": 1}],
             "restrictions": {"start_time": "18:00"}}
        ]
    })
}

/// The charger's transactions as the API lists them, newest first.
async fn transactions(api: &Api, charger: &str) -> Vec<Value> {
    let listed = api
        .get_ok(&format!("/api/v3/chargers/{charger}/transactions"))
        .await;
    listed["data"].as_array().expect("a data array").clone()
}

/// Waits until the charger's transaction `id` passes `done`; returns it.
pub(crate) async fn transaction_when(
    api: &Api,
    charger: &str,
    id: i64,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    eventually(what, async || {
        let all = transactions(api, charger).await;
        match all.into_iter().find(|t| t["id"] == id) {
            Some(t) if done(&t) => Ok(t),
            other => Err(format!("{other:?}")),
        }
    })
    .await
}

pub(crate) fn component<'a>(cost: &'a Value, kind: &str) -> &'a Value {
    let all = cost["components"].as_array().expect("components");
    all.iter()
        .find(|c| c["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} component in {cost}"))
}

async fn start(charger: &mut CommandedCharger, connector: u32, wh: i64, at: &str) -> i64 {
    let answer = charger
        .send(&format!("start {connector} TAG-PRICE {wh} {at}"))
        .await;
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    answer["transactionId"].as_i64().expect("a transactionId")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tariffs_are_checked_and_kept_while_a_site_uses_them() {
    let cms = Cms::up().await;
    // The operators' site is made with the first charger.
    cms.add_charger("CP-SEED").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let path = tariffs_path(&team);

    let created = api
        .expect(201, "POST", &path, Some(&energy_time_flat("0.30")))
        .await;
    let tariff = &created["data"];
    assert_eq!(tariff["name"], "Standard");
    assert_eq!(tariff["currency"], "EUR");
    assert_eq!(
        tariff["elements"][0]["price_components"][0]["price"],
        "0.30"
    );
    assert_eq!(tariff["min_price"], Value::Null);
    let uuid = uuid_of(tariff);
    let one = format!("{path}/{uuid}");
    assert_eq!(api.get_ok(&one).await["data"], *tariff);
    assert_eq!(api.get_ok(&path).await["data"][0]["uuid"], uuid.as_str());

    // Each broken rule is a 422 naming its field; nothing is written.
    let mut broken = energy_time_flat("0,30");
    broken["currency"] = json!("EURO");
    let errors = api.expect_invalid("POST", &path, Some(&broken)).await;
    assert!(errors["currency"].is_array(), "{errors}");
    assert!(
        errors["elements.0.price_components.0.price"].is_array(),
        "{errors}"
    );
    let empty = json!({"name": "Nothing", "currency": "EUR", "elements": []});
    let errors = api.expect_invalid("POST", &path, Some(&empty)).await;
    assert!(errors["elements"].is_array(), "{errors}");
    let listed = api.get_ok(&path).await;
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1), "{listed}");

    // A site prices with a tariff of its owner team, in its time zone.
    let site = operators_site(&api).await;
    let site_path = format!("/api/v3/sites/{site}");
    let bad =
        json!({"tariff_uuid": "00000000-0000-4000-8000-000000000000", "time_zone": "Mars/Base"});
    let errors = api.expect_invalid("PUT", &site_path, Some(&bad)).await;
    assert!(
        errors["tariff_uuid"].is_array() && errors["time_zone"].is_array(),
        "{errors}"
    );
    let priced = json!({"tariff_uuid": uuid, "time_zone": "Europe/Amsterdam"});
    let shown = api.expect(200, "PUT", &site_path, Some(&priced)).await;
    assert_eq!(shown["data"]["tariff_uuid"], uuid.as_str());
    assert_eq!(shown["data"]["time_zone"], "Europe/Amsterdam");

    // In use: kept (409); edited: shown as edited.
    let refused = api.expect(409, "DELETE", &one, None).await;
    assert!(
        refused["message"].as_str().unwrap().contains(&site),
        "{refused}"
    );
    let edited = api
        .expect(200, "PUT", &one, Some(&energy_time_flat("0.35")))
        .await;
    assert_eq!(
        edited["data"]["elements"][0]["price_components"][0]["price"],
        "0.35"
    );

    // Free again: deleted.
    let unpriced = json!({"tariff_uuid": null});
    let shown = api.expect(200, "PUT", &site_path, Some(&unpriced)).await;
    assert_eq!(shown["data"]["tariff_uuid"], Value::Null);
    api.expect(200, "DELETE", &one, None).await;
    api.expect(404, "GET", &one, None).await;

    // Another customer sees none of it.
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    stranger.expect(404, "GET", &path, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_costs_what_its_tariff_says() {
    let cms = Cms::up().await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let standard = create_tariff(&api, &team, &energy_time_flat("0.30")).await;
    let uuid = cms.add_charger("CP-PRICED").await;
    let site = operators_site(&api).await;
    let site_path = format!("/api/v3/sites/{site}");
    api.expect(
        200,
        "PUT",
        &site_path,
        Some(&json!({"tariff_uuid": standard})),
    )
    .await;

    let mut charger = CommandedCharger::connect(&cms.ocpp_url("CP-PRICED"), "CP-PRICED").await;
    let id = start(&mut charger, 1, 0, "2026-11-20T10:00:00Z").await;
    for (wh, at) in [(2500, "10:15"), (5000, "10:30"), (7500, "10:45")] {
        let line = format!("meter 1 {id} {wh} 2026-11-20T{at}:00Z");
        charger.send(&line).await;
    }

    // Running: the energy so far (7.5 kWh × 0.30), time up to now (days: more than an hour).
    let running = transaction_when(&api, &uuid, id, "a running cost", |t| {
        t["cost"]["components"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "ENERGY" && c["volume"] == "7.5")
        })
    })
    .await;
    assert_eq!(running["tariff_uuid"], standard.as_str());
    let cost = &running["cost"];
    assert_eq!(cost["currency"], "EUR");
    assert_eq!(component(cost, "ENERGY")["excl_vat"], "2.25");
    let hours: f64 = component(cost, "TIME")["volume"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(hours > 24.0, "time runs until now: {cost}");

    // The tariff edited mid-session: this session keeps the one it started under.
    api.expect(
        200,
        "PUT",
        &format!("{}/{standard}", tariffs_path(&team)),
        Some(&energy_time_flat("3.00")),
    )
    .await;
    charger
        .send(&format!("stop {id} - 10000 2026-11-20T11:00:00Z"))
        .await;

    // One hour, 10 kWh: 10 × 0.30 + 1 × 2.00 + 0.50 = 5.50; with 20% VAT 6.60.
    let done = transaction_when(&api, &uuid, id, "the final cost", |t| {
        t["stopped_at"].is_string() && t["cost"]["excl_vat"].is_string()
    })
    .await;
    let cost = &done["cost"];
    assert_eq!(cost["excl_vat"], "5.50", "{cost}");
    assert_eq!(cost["incl_vat"], "6.60", "{cost}");
    assert_eq!(component(cost, "ENERGY")["volume"], "10");
    assert_eq!(component(cost, "ENERGY")["excl_vat"], "3.00");
    assert_eq!(component(cost, "TIME")["volume"], "1");
    assert_eq!(component(cost, "TIME")["excl_vat"], "2.00");
    assert_eq!(component(cost, "FLAT")["excl_vat"], "0.50");

    // Across 18:00 in Amsterdam (17:00 UTC in January), split by the readings on either side.
    let peak = create_tariff(&api, &team, &evening_peak()).await;
    let priced = json!({"tariff_uuid": peak, "time_zone": "Europe/Amsterdam"});
    api.expect(200, "PUT", &site_path, Some(&priced)).await;
    let id = start(&mut charger, 2, 0, "2026-01-15T16:30:00Z").await;
    for (wh, at) in [(2000, "16:50"), (4000, "17:10")] {
        charger
            .send(&format!("meter 2 {id} {wh} 2026-01-15T{at}:00Z"))
            .await;
    }
    charger
        .send(&format!("stop {id} - 6000 2026-01-15T17:30:00Z"))
        .await;
    // Before 18:00: 2 kWh, and half of the 2 kWh between 17:50 and 18:10 = 3 kWh × 0.20 = 0.60;
    // after: 3 kWh × 0.40 = 1.20. No VAT.
    let done = transaction_when(&api, &uuid, id, "the evening cost", |t| {
        t["stopped_at"].is_string() && t["cost"]["excl_vat"].is_string()
    })
    .await;
    assert_eq!(done["tariff_uuid"], peak.as_str());
    assert_eq!(done["cost"]["excl_vat"], "1.80", "{done}");
    assert_eq!(done["cost"]["incl_vat"], "1.80", "{done}");
    assert_eq!(component(&done["cost"], "ENERGY")["volume"], "6");

    // A site without a tariff: no cost.
    api.expect(200, "PUT", &site_path, Some(&json!({"tariff_uuid": null})))
        .await;
    let id = start(&mut charger, 1, 10000, "2026-11-21T10:00:00Z").await;
    let unpriced = transaction_when(&api, &uuid, id, "an unpriced transaction", |_| true).await;
    assert_eq!(unpriced["tariff_uuid"], Value::Null);
    assert_eq!(unpriced["cost"], Value::Null);
    charger.finish().await;
}

/// The pricing whitepaper's message `message_id` the charge point received; its `data` parsed.
async fn cost_message(charger: &mut CommandedCharger, message_id: &str) -> Value {
    let line = charger
        .wait_for(&format!("DataTransfer {message_id}"), |l| {
            l["received"] == "DataTransfer"
                && l["payload"]["vendorId"] == "org.openchargealliance.costmsg"
                && l["payload"]["messageId"] == message_id
        })
        .await;
    let data = line["payload"]["data"].as_str().expect("data as a string");
    serde_json::from_str(data).expect("data holds JSON")
}

fn cost_messages(charger: &mut CommandedCharger) -> usize {
    let all = charger.received_of("DataTransfer");
    all.iter()
        .filter(|l| l["payload"]["vendorId"] == "org.openchargealliance.costmsg")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prices_and_costs_are_shown_on_chargers_that_display_them() {
    let cms = Cms::up().await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let tariff = create_tariff(&api, &team, &energy_time_flat("0.30")).await;
    let displays = r#"{"CustomDisplayCostAndPrice": {"value": "true", "readonly": true}}"#;
    let mut chargers = Vec::new();
    for (identity, pro) in [("CP-NOPRO", false), ("CP-SHOW", true)] {
        let uuid = cms.add_charger(identity).await;
        cms.license(identity, false, pro).await;
        let url = cms.ocpp_url(identity);
        let charger = CommandedCharger::connect_with(&url, identity, &["--config", displays]).await;
        // cms reads each charger's configuration after its boot.
        let settings = format!("/api/v3/chargers/{uuid}/settings");
        eventually("the configuration read", async || {
            let shown = api.get_ok(&settings).await;
            let keys = shown["data"].as_array().cloned().unwrap_or_default();
            match keys.iter().any(|k| k["key"] == "CustomDisplayCostAndPrice") {
                true => Ok(()),
                false => Err(shown.to_string()),
            }
        })
        .await;
        chargers.push(charger);
    }
    let site = operators_site(&api).await;
    let shown = json!({"tariff_uuid": tariff, "show_prices": true});
    let site_body = api
        .expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&shown))
        .await;
    assert_eq!(site_body["data"]["show_prices"], true);
    let (mut unlicensed, mut charger) = (chargers.remove(0), chargers.remove(0));

    // After its next boot's configuration read, the charger gets its default price and the
    // site's offset from UTC.
    charger.disconnect().await;
    charger.connect_to(&cms.ocpp_url("CP-SHOW")).await;
    let changed = |key: &'static str| {
        move |l: &Value| l["received"] == "ChangeConfiguration" && l["payload"]["key"] == key
    };
    let default = charger
        .wait_for("DefaultPrice", changed("DefaultPrice"))
        .await;
    let value = default["payload"]["value"].as_str().expect("a value");
    let default: Value = serde_json::from_str(value).expect("JSON");
    assert_eq!(
        default["priceText"],
        "0.36 EUR/kWh, 2.40 EUR/h, 0.60 EUR per session"
    );
    assert_eq!(default["chargingPrice"]["kWhPrice"].as_f64(), Some(0.36));
    let offset = charger.wait_for("TimeOffset", changed("TimeOffset")).await;
    assert_eq!(
        offset["payload"]["value"], "+00:00",
        "the site's time zone is UTC"
    );

    // Without `pro`: priced, but nothing is shown on it.
    let id = start(&mut unlicensed, 1, 0, "2026-11-20T10:00:00Z").await;
    unlicensed
        .send(&format!("stop {id} - 10000 2026-11-20T11:00:00Z"))
        .await;

    let id = start(&mut charger, 1, 0, "2026-11-20T10:00:00Z").await;
    let price = cost_message(&mut charger, "SetUserPrice").await;
    assert_eq!(
        price,
        json!({"idToken": "TAG-PRICE", "priceText": "0.36 EUR/kWh, 2.40 EUR/h, 0.60 EUR per session"})
    );
    charger
        .send(&format!("meter 1 {id} 2500 2026-11-20T10:15:00Z"))
        .await;
    let running = cost_message(&mut charger, "RunningCost").await;
    assert_eq!(running["transactionId"], id);
    assert_eq!(running["meterValue"], 2500);
    assert_eq!(running["state"], "Charging");
    let prices = &running["chargingPrice"];
    let price = |key: &str| prices[key].as_f64();
    assert_eq!(
        (price("kWhPrice"), price("hourPrice"), price("flatFee")),
        (Some(0.36), Some(2.4), Some(0.6)),
        "{prices}"
    );
    assert!(
        running["cost"].as_f64().is_some_and(|c| c > 0.0),
        "{running}"
    );
    charger
        .send(&format!("stop {id} - 10000 2026-11-20T11:00:00Z"))
        .await;
    // 5.50 excl. VAT, 6.60 with 20%: as the API shows it.
    let last = cost_message(&mut charger, "FinalCost").await;
    assert_eq!(last["transactionId"], id);
    assert_eq!(last["cost"].as_f64(), Some(6.6), "{last}");
    assert_eq!(last["priceText"], "6.60 EUR incl. VAT (5.50 EUR excl. VAT)");
    assert_eq!(
        cost_messages(&mut unlicensed),
        0,
        "a charger without the pro licence is sent no prices"
    );
    assert!(unlicensed.received_of("ChangeConfiguration").is_empty());
    charger.finish().await;
    unlicensed.finish().await;
}
