//! Prices on a 2.0.1 station (docs/tariffs.md "Prices on the charger", docs/ocpp201.md "Prices
//! and costs"): OCPP 2.0.1's own tariff and cost messages in place of 1.6's whitepaper. After a
//! report of its device model shows TariffCostCtrlr, the station is told its fallback texts and
//! currency (SetVariables); while a session runs, what it has cost so far (`CostUpdated`, at
//! most every 5 minutes, on a kept reading); once it ended and was priced, its total
//! (`CostUpdated` again). The driver's price text at Authorize and at the start is the
//! gateway's (the idTokenInfo's `personalMessage`, from the registry). Each call goes through the
//! actions' path, so it is in the station's audit log.

use super::price_messages::{RUNNING_COST_EVERY, number};
use crate::control::actions::{Dispatch, Target};
use chrono::Utc;
use cms_bus::RequestedBy;
use cms_store::price_display::PriceDisplay;
use cms_tariffs::{Tariff, price_text};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What the station shows at the end of a session until its total comes (a `CostUpdated` right
/// after the transaction was priced, seconds later as a rule).
pub const TOTAL_COST_FALLBACK: &str = "Calculating the total cost of your session";
/// A station's configuration is sent once per this, however many of its reports show it (a
/// base report comes in several NotifyReports).
const CONFIGURE_EVERY: Duration = Duration::from_secs(60);

/// What the worker remembers of 2.0.1 stations between events.
#[derive(Default)]
pub struct Stations {
    /// When each transaction's running cost was last sent, by (station, its transactionId).
    running_sent: HashMap<(String, String), Instant>,
    /// When each station was last configured.
    configured: HashMap<String, Instant>,
}

/// Its device model was reported with TariffCostCtrlr on: its fallback texts and currency.
pub async fn configure(
    dispatch: &Dispatch,
    stations: &mut Stations,
    identity: &str,
) -> Result<(), String> {
    if (stations.configured.get(identity)).is_some_and(|at| at.elapsed() < CONFIGURE_EVERY) {
        return Ok(());
    }
    let display = dispatch.store.station_charger_price_display(identity).await;
    let Some(display) = display.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let Some(session) = display.session.as_deref() else {
        return Ok(());
    };
    let tariff: Tariff =
        serde_json::from_str(&display.tariff).map_err(|e| format!("the site's tariff: {e}"))?;
    let variable = |name: &str, value: &str| {
        json!({"component": {"name": "TariffCostCtrlr"}, "variable": {"name": name},
               "attributeValue": value})
    };
    let request = json!({"setVariableData": [
        variable("TariffFallbackMessage", &price_text(&tariff)),
        variable("TotalCostFallbackMessage", TOTAL_COST_FALLBACK),
        variable("Currency", &tariff.currency),
    ]});
    let target = Target {
        charger_id: display.charger_id,
        identity,
        session,
    };
    let action = cms_ocpp::v201::Command::SetVariables.into();
    (dispatch
        .take(&target, action, request, RequestedBy::system())
        .await)
        .map_err(|e| e.to_string())?;
    if stations.configured.len() >= 1024 {
        stations
            .configured
            .retain(|_, at| at.elapsed() < CONFIGURE_EVERY);
    }
    stations
        .configured
        .insert(identity.to_string(), Instant::now());
    metrics::counter!("cms_price_display_sent_total", "message" => "TariffCostCtrlr").increment(1);
    Ok(())
}

/// A reading of a running transaction was kept: its cost so far, when due.
pub async fn running(
    dispatch: &Dispatch,
    stations: &mut Stations,
    identity: &str,
    transaction_id: &str,
) -> Result<(), String> {
    let key = (identity.to_string(), transaction_id.to_string());
    let due = (stations.running_sent.get(&key)).is_none_or(|s| s.elapsed() >= RUNNING_COST_EVERY);
    if !due {
        return Ok(());
    }
    let shown = dispatch
        .store
        .station_price_display(identity, transaction_id);
    let Some(shown) = shown.await.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let t = &shown.transaction;
    if t.stopped_at.is_some() {
        return Ok(());
    }
    let readings =
        (dispatch.store.transaction_readings(&[t.id]).await).map_err(|e| e.to_string())?;
    let cost = crate::control::pricing::price(t, &readings, Utc::now())
        .ok_or("not priced")?
        .map_err(|e| e.to_string())?;
    // Transactions whose end never came here would stay in the map for good.
    if stations.running_sent.len() >= 1024 {
        (stations.running_sent).retain(|_, sent| sent.elapsed() < 2 * RUNNING_COST_EVERY);
    }
    stations.running_sent.insert(key, Instant::now());
    cost_updated(
        dispatch,
        &shown,
        transaction_id,
        &cost.incl_vat,
        "RunningCost",
    )
    .await
}

/// The transaction ended and was priced: its total, as the API's transaction shows it.
pub async fn ended(
    dispatch: &Dispatch,
    stations: &mut Stations,
    identity: &str,
    transaction_id: &str,
) -> Result<(), String> {
    let key = (identity.to_string(), transaction_id.to_string());
    stations.running_sent.remove(&key);
    let shown = dispatch
        .store
        .station_price_display(identity, transaction_id);
    let Some(shown) = shown.await.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let t = &shown.transaction;
    // Written when it ended, as a rule: the readings are needed only when it was not.
    let readings = match t.cost {
        Some(_) => Vec::new(),
        None => (dispatch.store.transaction_readings(&[t.id]).await).map_err(|e| e.to_string())?,
    };
    let cost = crate::control::pricing::cost_of(t, &readings, Utc::now());
    let total = cost["incl_vat"].as_str().ok_or("no cost")?;
    cost_updated(dispatch, &shown, transaction_id, total, "FinalCost").await
}

/// `CostUpdated` to the station's session when it is online; its end is not awaited (it is in
/// the audit log). `message` names it in the metric as 1.6's message of the same moment.
async fn cost_updated(
    dispatch: &Dispatch,
    shown: &PriceDisplay,
    transaction_id: &str,
    total_incl_vat: &str,
    message: &'static str,
) -> Result<(), String> {
    let Some(session) = shown.session.as_deref() else {
        return Ok(());
    };
    let request: Value =
        json!({"totalCost": number(total_incl_vat)?, "transactionId": transaction_id});
    let target = Target {
        charger_id: shown.charger_id,
        identity: &shown.identity,
        session,
    };
    let action = cms_ocpp::v201::Command::CostUpdated.into();
    (dispatch
        .take(&target, action, request, RequestedBy::system())
        .await)
        .map_err(|e| e.to_string())?;
    metrics::counter!("cms_price_display_sent_total", "message" => message).increment(1);
    Ok(())
}
