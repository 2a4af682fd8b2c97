//! Prices on the charger (docs/tariffs.md "Prices on the charger"): the Open Charge Alliance's
//! pricing whitepaper for OCPP 1.6, whose DataTransfer messages (vendor
//! `org.openchargealliance.costmsg`) tell a charger what the driver pays (`SetUserPrice`, once the
//! transaction starts), what the session has cost so far (`RunningCost`) and in the end
//! (`FinalCost`). They go through the actions' path like any call, so each is in the charger's
//! audit log. The materialiser, which sees every transaction once across the API replicas,
//! hands the events over; a worker looks up whether the prices are shown and sends. A 2.0.1
//! station's events go to `price_display_v201` (OCPP 2.0.1's own tariff and cost messages).

use crate::control::actions::{Dispatch, Target};
use crate::control::price_display_v201 as v201;
use crate::control::price_messages::{RUNNING_COST_EVERY, number};
use chrono::Utc;
use cms_bus::RequestedBy;
use cms_store::price_display::PriceDisplay;
use cms_tariffs::{Tariff, display_price, price_text};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The whitepaper's vendor id.
pub const VENDOR_ID: &str = "org.openchargealliance.costmsg";
/// Events waiting for the worker; past it they are dropped and counted, never awaited.
const QUEUE: usize = 4096;

/// What the materialiser saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceEvent {
    Started {
        identity: String,
        ocpp_transaction_id: i64,
    },
    /// An energy reading kept for a connector's priced transaction.
    Reading { identity: String, connector_id: i64 },
    /// After its final cost was written.
    Stopped {
        identity: String,
        ocpp_transaction_id: i64,
    },
    /// Its whole configuration was read (after a boot) and says it displays costs.
    Configured { identity: String },
    /// A 2.0.1 station reported its device model with TariffCostCtrlr on.
    StationConfigured { identity: String },
    /// An energy reading of a 2.0.1 station's running transaction (by the station's id).
    StationReading {
        identity: String,
        transaction_id: String,
    },
    /// A 2.0.1 station's transaction ended, after its cost was written.
    StationEnded {
        identity: String,
        transaction_id: String,
    },
}

/// Starts the worker; the sender is the materialiser's.
pub fn start(dispatch: Arc<Dispatch>) -> mpsc::Sender<PriceEvent> {
    let (sender, mut events) = mpsc::channel(QUEUE);
    tokio::spawn(async move {
        let mut running_sent: RunningSent = HashMap::new();
        let mut stations = v201::Stations::default();
        let mut anywhere = ShownAnywhere::default();
        while let Some(event) = events.recv().await {
            // A reading comes a minute per charging connector: while no site shows prices,
            // it costs no look-up.
            let reading = matches!(
                event,
                PriceEvent::Reading { .. } | PriceEvent::StationReading { .. }
            );
            if reading && !anywhere.now(&dispatch.store).await {
                continue;
            }
            let handled = match &event {
                PriceEvent::StationConfigured { identity } => {
                    v201::configure(&dispatch, &mut stations, identity).await
                }
                PriceEvent::StationReading {
                    identity,
                    transaction_id,
                } => v201::running(&dispatch, &mut stations, identity, transaction_id).await,
                PriceEvent::StationEnded {
                    identity,
                    transaction_id,
                } => v201::ended(&dispatch, &mut stations, identity, transaction_id).await,
                _ => handle(&dispatch, &mut running_sent, &event).await,
            };
            if let Err(e) = handled {
                tracing::warn!(?event, error = %e, "a price was not sent to the charger");
            }
        }
    });
    sender
}

/// Whether any site shows prices, asked of the store at most every [`SHOWN_ANYWHERE_EVERY`].
#[derive(Default)]
struct ShownAnywhere(Option<(bool, Instant)>);

/// How long the answer of [`ShownAnywhere`] holds: a site that starts showing prices gets its
/// running costs this much later at most.
const SHOWN_ANYWHERE_EVERY: Duration = Duration::from_secs(10);

impl ShownAnywhere {
    async fn now(&mut self, store: &cms_store::Store) -> bool {
        match self.0 {
            Some((shown, asked)) if asked.elapsed() < SHOWN_ANYWHERE_EVERY => shown,
            _ => {
                // When the store cannot say, the look-up per reading decides.
                let shown = store.any_site_shows_prices().await.unwrap_or(true);
                self.0 = Some((shown, Instant::now()));
                shown
            }
        }
    }
}

/// Hands an event over without waiting: a full queue drops it (counted).
pub fn offer(sender: &mpsc::Sender<PriceEvent>, event: PriceEvent) {
    if sender.try_send(event).is_err() {
        metrics::counter!("cms_price_display_dropped_total").increment(1);
    }
}

/// When each connector's running cost was last sent, by (charger identity, connector).
type RunningSent = HashMap<(String, i64), Instant>;

async fn handle(
    dispatch: &Dispatch,
    running_sent: &mut RunningSent,
    event: &PriceEvent,
) -> Result<(), String> {
    let store = &dispatch.store;
    match event {
        PriceEvent::Configured { identity } => return configure(dispatch, identity).await,
        // At most one running cost a connector per period: told before asking the store.
        PriceEvent::Reading {
            identity,
            connector_id,
        } => {
            let key = (identity.clone(), *connector_id);
            let due = running_sent
                .get(&key)
                .is_none_or(|sent| sent.elapsed() >= RUNNING_COST_EVERY);
            if !due {
                return Ok(());
            }
        }
        _ => {}
    }
    let shown = match event {
        PriceEvent::Started {
            identity,
            ocpp_transaction_id,
        }
        | PriceEvent::Stopped {
            identity,
            ocpp_transaction_id,
        } => store.price_display(identity, *ocpp_transaction_id).await,
        PriceEvent::Reading {
            identity,
            connector_id,
        } => store.open_price_display(identity, *connector_id).await,
        _ => return Ok(()),
    };
    let Some(shown) = shown.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let t = &shown.transaction;
    let tariff: Tariff = serde_json::from_str(t.tariff.as_deref().unwrap_or_default())
        .map_err(|e| format!("the kept tariff: {e}"))?;
    let (message, data) = match event {
        PriceEvent::Started { .. } => {
            let data = json!({"idToken": t.id_tag, "priceText": price_text(&tariff)});
            ("SetUserPrice", data)
        }
        PriceEvent::Reading {
            identity,
            connector_id,
        } => {
            // Connectors whose stop never came here (dropped events, prices no longer shown)
            // would stay in the map for good: forget those long past their last message.
            if running_sent.len() >= 1024 {
                running_sent.retain(|_, sent| sent.elapsed() < 2 * RUNNING_COST_EVERY);
            }
            running_sent.insert((identity.clone(), *connector_id), Instant::now());
            (
                "RunningCost",
                running_cost(dispatch, &shown, &tariff).await?,
            )
        }
        PriceEvent::Stopped { identity, .. } => {
            running_sent.remove(&(identity.clone(), t.connector_id));
            ("FinalCost", final_cost(dispatch, &shown).await?)
        }
        _ => return Ok(()),
    };
    send(dispatch, &shown, message, &data).await
}

/// After a boot: the whitepaper's `DefaultPrice` (what the charger shows before a driver is
/// known, and while offline) and `TimeOffset` (the site's offset from UTC now, for the times it
/// shows), each a ChangeConfiguration through the actions' path.
async fn configure(dispatch: &Dispatch, identity: &str) -> Result<(), String> {
    let display = dispatch.store.charger_price_display(identity).await;
    let Some(display) = display.map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let Some(session) = display.session.as_deref() else {
        return Ok(());
    };
    let tariff: Tariff =
        serde_json::from_str(&display.tariff).map_err(|e| format!("the site's tariff: {e}"))?;
    let text = price_text(&tariff);
    let default_price = json!({
        "priceText": text,
        "priceTextOffline": text,
        "chargingPrice": charging_price(&tariff)?,
    });
    let zone = cms_tariffs::time_zone(&display.time_zone).ok_or("the site's time zone")?;
    let offset = Utc::now().with_timezone(&zone).format("%:z").to_string();
    let target = Target {
        charger_id: display.charger_id,
        identity,
        session,
    };
    for (key, value) in [
        ("DefaultPrice", default_price.to_string()),
        ("TimeOffset", offset),
    ] {
        let request = json!({"key": key, "value": value});
        dispatch
            .take(
                &target,
                cms_ocpp::v16::Command::ChangeConfiguration.into(),
                request,
                RequestedBy::system(),
            )
            .await
            .map_err(|e| e.to_string())?;
    }
    metrics::counter!("cms_price_display_sent_total", "message" => "DefaultPrice").increment(1);
    Ok(())
}

/// The whitepaper's `chargingPrice`: per kWh, per hour and per session, VAT included.
fn charging_price(tariff: &Tariff) -> Result<Value, String> {
    let prices = display_price(tariff);
    let mut charging_price = serde_json::Map::new();
    for (key, amount) in [
        ("kWhPrice", prices.kwh),
        ("hourPrice", prices.hour),
        ("flatFee", prices.flat),
    ] {
        if let Some(amount) = amount {
            charging_price.insert(key.into(), number(&amount.to_string())?);
        }
    }
    Ok(Value::Object(charging_price))
}

/// `RunningCost`: the cost so far and the energy register, with the prices in force.
async fn running_cost(
    dispatch: &Dispatch,
    shown: &PriceDisplay,
    tariff: &Tariff,
) -> Result<Value, String> {
    let t = &shown.transaction;
    let readings = dispatch
        .store
        .transaction_readings(&[t.id])
        .await
        .map_err(|e| e.to_string())?;
    let cost = crate::control::pricing::price(t, &readings, Utc::now())
        .ok_or("not priced")?
        .map_err(|e| e.to_string())?;
    let meter_value = readings
        .iter()
        .rev()
        .find_map(|r| r.energy_wh)
        .unwrap_or(t.meter_start);
    let charging_price = charging_price(tariff)?;
    Ok(json!({
        "transactionId": t.ocpp_transaction_id,
        "timestamp": Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "meterValue": meter_value,
        "cost": number(&cost.incl_vat)?,
        "state": "Charging",
        "chargingPrice": charging_price,
    }))
}

/// `FinalCost`: what the session cost, VAT included, as written when it stopped.
async fn final_cost(dispatch: &Dispatch, shown: &PriceDisplay) -> Result<Value, String> {
    let t = &shown.transaction;
    // Written when it stopped, as a rule: the readings are needed only when it was not.
    let readings = match t.cost {
        Some(_) => Vec::new(),
        None => dispatch
            .store
            .transaction_readings(&[t.id])
            .await
            .map_err(|e| e.to_string())?,
    };
    let cost = crate::control::pricing::cost_of(t, &readings, Utc::now());
    let (Some(incl), Some(excl), Some(currency)) = (
        cost["incl_vat"].as_str(),
        cost["excl_vat"].as_str(),
        cost["currency"].as_str(),
    ) else {
        return Err("no cost".into());
    };
    Ok(json!({
        "transactionId": t.ocpp_transaction_id,
        "cost": number(incl)?,
        "priceText": format!("{incl} {currency} incl. VAT ({excl} {currency} excl. VAT)"),
        "qrCodeText": "",
    }))
}

/// Sends the message to the charger's session, when it is online; its end is not awaited (it
/// is in the audit log).
async fn send(
    dispatch: &Dispatch,
    shown: &PriceDisplay,
    message: &str,
    data: &Value,
) -> Result<(), String> {
    let Some(session) = shown.session.as_deref() else {
        return Ok(());
    };
    let request = json!({"vendorId": VENDOR_ID, "messageId": message, "data": data.to_string()});
    let target = Target {
        charger_id: shown.charger_id,
        identity: &shown.identity,
        session,
    };
    dispatch
        .take(
            &target,
            cms_ocpp::v16::Command::DataTransfer.into(),
            request,
            RequestedBy::system(),
        )
        .await
        .map(|_| {
            metrics::counter!("cms_price_display_sent_total", "message" => message.to_string())
                .increment(1)
        })
        .map_err(|e| e.to_string())
}
