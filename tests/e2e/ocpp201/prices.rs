//! Tariff and cost on a 2.0.1 station (issue 45, block I; docs/tariffs.md "Prices on the
//! charger"): the Python station with TariffCostCtrlr in its device model
//! (tests/interop/ocpp201_prices.py) at a site that shows prices is told its fallback texts
//! and currency after its base report, its driver's price at Authorize and at the start, what
//! the session costs while it runs and its total at the end: the API's transaction `cost`.

use super::{Bench, SHOWN, require_python_packages, run_to_end};
use crate::support::peer::Peer;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::station201::{answer_of, python_station};
use crate::support::{Api, eventually_within};
use serde_json::{Value, json};
use std::time::Duration;

/// 0.30 a kWh and 0.50 a session, before 20% VAT: shown as 0.36 and 0.60.
const PRICE_TEXT: &str = "0.36 EUR/kWh, 0.60 EUR per session";

/// Prices the operators' site with that tariff and shows prices on its chargers.
pub(crate) async fn show_prices(api: &Api) {
    let team = uuid_of(&team_of_type(api, "operators").await);
    let tariff = json!({"name": "Energy", "currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "vat": 20, "step_size": 1},
        {"type": "FLAT", "price": "0.50", "vat": 20, "step_size": 1}]}]});
    let tariff = create_tariff(api, &team, &tariff).await;
    let site = format!("/api/v3/sites/{}", operators_site(api).await);
    let shown = json!({"tariff_uuid": tariff, "show_prices": true});
    api.expect(200, "PUT", &site, Some(&shown)).await;
}

/// The charger `uuid`'s transaction `station_id` once priced, as the API shows it.
async fn priced(api: &Api, uuid: &str, station_id: &str, within: Duration) -> Value {
    let path = format!("/api/v3/chargers/{uuid}/transactions");
    eventually_within(within, &format!("{station_id} priced"), async || {
        let page = api.get_ok(&path).await;
        let data = page["data"].as_array().cloned().unwrap_or_default();
        match data
            .iter()
            .find(|t| t["station_transaction_id"] == station_id)
        {
            Some(t) if t["cost"]["incl_vat"].is_string() => Ok(t.clone()),
            _ => Err(page.to_string()),
        }
    })
    .await
}

/// What the station (which ran `prices`) was told, checked against what the API shows.
pub(crate) async fn assert_prices_told(
    api: &Api,
    uuid: &str,
    identity: &str,
    station: &mut Peer,
    within: Duration,
) {
    let printed = station.printed();
    let told = printed.iter().find(|l| l.get("tariff_cost").is_some());
    let told =
        told.unwrap_or_else(|| panic!("no tariff_cost line: {printed:?}"))["tariff_cost"].clone();
    assert_eq!(told["TariffFallbackMessage"], PRICE_TEXT, "{told}");
    assert_eq!(told["Currency"], "EUR", "{told}");
    let total_fallback = told["TotalCostFallbackMessage"].as_str();
    assert!(
        total_fallback.is_some_and(|t| !t.is_empty() && t != "unset"),
        "{told}"
    );

    let message = json!({"format": "UTF8", "content": PRICE_TEXT});
    let authorizes = station.lines_where("sent", "Authorize");
    let last = &authorizes.last().expect("an Authorize")["answer"];
    assert_eq!(last["idTokenInfo"]["status"], "Accepted", "{last}");
    assert_eq!(last["idTokenInfo"]["personalMessage"], message, "{last}");
    let started = answer_of(station, "TransactionEvent", 0);
    assert_eq!(
        started["idTokenInfo"]["personalMessage"], message,
        "{started}"
    );
    // The meter path's answer stays the empty one; the end's has no total.
    assert_eq!(answer_of(station, "TransactionEvent", 1), json!({}));
    let ended = answer_of(station, "TransactionEvent", 2);
    assert_eq!(ended["totalCost"], Value::Null, "{ended}");

    let transaction_id = format!("TX-PRICE-{identity}");
    let costs = station.lines_where("received", "CostUpdated");
    assert!(costs.len() >= 2, "a running and a final cost: {costs:?}");
    for cost in &costs {
        assert_eq!(cost["payload"]["transactionId"], transaction_id, "{cost}");
    }
    let running = costs[0]["payload"]["totalCost"].as_f64();
    assert!(running.is_some_and(|c| c > 0.0), "{:?}", costs[0]);
    let transaction = priced(api, uuid, &transaction_id, within).await;
    // 5 kWh at 0.30 and the session's 0.50, 20% VAT: 2.40.
    assert_eq!(transaction["cost"]["incl_vat"], "2.40", "{transaction}");
    let last = &costs.last().expect("a final cost")["payload"]["totalCost"];
    assert_eq!(last.as_f64(), Some(2.4), "the API's total: {costs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_is_told_prices_and_costs() {
    require_python_packages().await;
    let bench = Bench::start("CP-201-PRICE").await;
    bench.cms.license(&bench.identity, false, true).await;
    show_prices(&bench.api).await;
    let station = python_station(&bench.url(), &bench.identity, "prices", &[]);
    let mut station = run_to_end(station, 0).await;
    let (api, uuid) = (&bench.api, &bench.uuid);
    assert_prices_told(api, uuid, &bench.identity, &mut station, SHOWN).await;
}
