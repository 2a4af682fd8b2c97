//! The sinks after the store, each handed every applied batch in turn: the latest-value cache
//! (written only once the store has committed, so that what the REST API streams is stored),
//! pricing (final costs of stopped transactions) and the prices' display on chargers.

use super::translate::latest_reading;
use crate::control::price_display::PriceEvent;
use crate::ingest::cache::LatestValueCache;
use cms_store::{StateChange, Store};
use tokio::sync::mpsc;

/// Offers each of the batch's latest readings to the cache (the live streams hear of it).
pub(crate) fn remember_readings(cache: &LatestValueCache, changes: &[StateChange]) {
    for (identity, connector_id, reading) in changes.iter().filter_map(latest_reading) {
        cache.offer(identity, connector_id, reading);
    }
}

/// Writes the final cost of the batch's stopped transactions (those that took a tariff).
pub(super) async fn price_stopped(store: &Store, changes: &[StateChange]) {
    use crate::control::pricing::{write_final_cost, write_final_station_costs};
    let mut stations = Vec::new();
    for change in changes {
        match change {
            StateChange::TransactionStopped {
                identity,
                ocpp_transaction_id,
                ..
            } => write_final_cost(store, identity, *ocpp_transaction_id).await,
            // Any event of a 2.0.1 transaction: one sent offline may come after its end.
            StateChange::TransactionEvent(event) => {
                stations.push((
                    event.identity.as_str(),
                    event.station_transaction_id.as_str(),
                ));
            }
            _ => {}
        }
    }
    stations.sort_unstable();
    stations.dedup();
    write_final_station_costs(store, &stations).await;
    tell_transactions_ended(store, changes).await;
}

/// Writes the `transaction.ended` webhook events of the batch's stopped transactions, now that
/// their cost is known; retried until the store takes them, as the batch was (the bus commits
/// the batch only after, so an event is never lost).
async fn tell_transactions_ended(store: &Store, changes: &[StateChange]) {
    use cms_store::station_events::EventType;
    use cms_store::webhooks::outbox::Ended;
    let ended: Vec<Ended> = (changes.iter())
        .filter_map(|change| match change {
            StateChange::TransactionStopped {
                identity,
                ocpp_transaction_id,
                ..
            } => Some(Ended::V16(identity, *ocpp_transaction_id)),
            StateChange::TransactionEvent(event) if event.event_type == EventType::Ended => {
                Some(Ended::V201(&event.identity, &event.station_transaction_id))
            }
            _ => None,
        })
        .collect();
    let mut delay = super::FIRST_RETRY;
    while let Err(e) = store.emit_transactions_ended(&ended).await {
        if e.is_refusal() {
            tracing::error!(error = %e, "transaction.ended events refused by the store");
            return;
        }
        tracing::error!(error = %e, retry_in = ?delay, "transaction.ended events not written");
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(super::LAST_RETRY);
    }
}

/// Hands the batch's transaction starts, kept readings and stops to the prices' display.
pub(super) fn show_prices(sender: Option<&mpsc::Sender<PriceEvent>>, changes: &[StateChange]) {
    let Some(sender) = sender else {
        return;
    };
    for change in changes {
        let event = match change {
            StateChange::TransactionStarted {
                identity,
                ocpp_transaction_id,
                ..
            } => PriceEvent::Started {
                identity: identity.clone(),
                ocpp_transaction_id: *ocpp_transaction_id,
            },
            StateChange::TransactionStopped {
                identity,
                ocpp_transaction_id,
                ..
            } => PriceEvent::Stopped {
                identity: identity.clone(),
                ocpp_transaction_id: *ocpp_transaction_id,
            },
            StateChange::MeterValue {
                identity,
                connector_id,
                energy: Some(_),
                ..
            }
            | StateChange::TransactionEnergy {
                identity,
                connector_id,
                ..
            } => PriceEvent::Reading {
                identity: identity.clone(),
                connector_id: *connector_id,
            },
            StateChange::ActionReported(report) if displays_costs(report) => {
                PriceEvent::Configured {
                    identity: report.identity.clone(),
                }
            }
            StateChange::DeviceModelReported {
                identity,
                variables,
                ..
            } if has_tariff_cost(variables) => PriceEvent::StationConfigured {
                identity: identity.clone(),
            },
            StateChange::TransactionEvent(event) => match station_event(event) {
                Some(event) => event,
                None => continue,
            },
            _ => continue,
        };
        crate::control::price_display::offer(sender, event);
    }
}

/// A 2.0.1 transaction's end, or a reading kept while it runs, as the prices' display takes it.
fn station_event(event: &cms_store::station_events::TransactionEvent) -> Option<PriceEvent> {
    use cms_store::station_events::EventType;
    let (identity, transaction_id) = (event.identity.clone(), event.station_transaction_id.clone());
    match event.event_type {
        EventType::Ended => Some(PriceEvent::StationEnded {
            identity,
            transaction_id,
        }),
        _ if !event.energy.is_empty() => Some(PriceEvent::StationReading {
            identity,
            transaction_id,
        }),
        _ => None,
    }
}

/// Whether a 2.0.1 station's report says it handles tariffs or costs (TariffCostCtrlr's
/// `Available` or `Enabled` true).
fn has_tariff_cost(variables: &[cms_store::device_model::ReportedVariable]) -> bool {
    variables.iter().any(|v| {
        v.name.component == "TariffCostCtrlr"
            && matches!(v.name.variable.as_str(), "Available" | "Enabled")
            && v.value
                .as_deref()
                .is_some_and(|value| value.eq_ignore_ascii_case("true"))
    })
}

/// Whether the report is of a whole configuration read that says the charger displays costs
/// (the pricing whitepaper's `CustomDisplayCostAndPrice`).
fn displays_costs(report: &cms_store::actions::ActionReported) -> bool {
    match &report.settings {
        Some(cms_store::actions::SettingsUpdate::Replace(settings)) => settings.iter().any(|s| {
            s.key == "CustomDisplayCostAndPrice"
                && s.value
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        }),
        _ => false,
    }
}
