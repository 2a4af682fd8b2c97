//! The cost of a transaction (docs/tariffs.md): priced by `cms-tariffs` from the tariff it
//! started under and the readings the store kept for it. A stopped transaction's cost is
//! written once, by the materialiser, and read back as written; a running one's is priced on
//! every read, up to now. Either way the work is bounded: the store keeps a transaction a row
//! a minute of its first days at most, however many readings its charger sends. One crate, so
//! the REST API, the chargers' price displays and OCPI's sessions and CDRs show one figure.
#![forbid(unsafe_code)]

use chrono::{DateTime, Utc};
use cms_store::transaction_readings::TransactionReading;
use cms_store::transactions::TransactionRow;
use serde_json::Value;

/// The transaction's cost as the API shows it: null when it took no tariff.
pub fn cost_of(t: &TransactionRow, readings: &[TransactionReading], now: DateTime<Utc>) -> Value {
    if let Some(stored) = &t.cost {
        return serde_json::from_str(stored).unwrap_or(Value::Null);
    }
    match price(t, readings, now) {
        Some(Ok(cost)) => serde_json::to_value(cost).unwrap_or(Value::Null),
        Some(Err(e)) => {
            tracing::warn!(transaction = t.id, error = %e, "cannot price a transaction");
            Value::Null
        }
        None => Value::Null,
    }
}

/// Prices a transaction up to its stop, or up to `now` while it runs. `None` without a tariff.
pub fn price(
    t: &TransactionRow,
    readings: &[TransactionReading],
    now: DateTime<Utc>,
) -> Option<Result<cms_tariffs::Cost, String>> {
    let tariff = t.tariff.as_deref()?;
    Some(price_with(t, tariff, readings, now))
}

fn price_with(
    t: &TransactionRow,
    tariff: &str,
    readings: &[TransactionReading],
    now: DateTime<Utc>,
) -> Result<cms_tariffs::Cost, String> {
    let tariff: cms_tariffs::Tariff =
        serde_json::from_str(tariff).map_err(|e| format!("the kept tariff: {e}"))?;
    let started_at = time(&t.started_at)?;
    let stopped_at = t.stopped_at.as_deref().map(time).transpose()?;
    let ended_at = stopped_at.unwrap_or(now).max(started_at);
    let zone = t.time_zone.as_deref().unwrap_or("UTC");
    let time_zone = cms_tariffs::time_zone(zone).ok_or(format!("time zone {zone}"))?;
    let mut kept = Vec::with_capacity(2 * readings.len() + 1);
    for r in readings.iter().filter(|r| r.transaction_id == t.id) {
        // A minute's earliest register reading and its last status change, each at its time.
        let energy = (r.energy_at.as_deref().zip(r.energy_wh)).map(|(at, wh)| (at, Some(wh), None));
        let parking =
            (r.parking_at.as_deref().zip(r.parking)).map(|(at, p)| (at, None, Some(p != 0)));
        for (at, energy_wh, parking) in energy.into_iter().chain(parking) {
            let at = time(at)?;
            if at < started_at || at > ended_at {
                continue;
            }
            kept.push(cms_tariffs::Reading {
                at,
                energy_wh,
                parking,
            });
        }
    }
    if let (Some(at), Some(wh)) = (stopped_at, t.meter_stop) {
        kept.push(cms_tariffs::Reading {
            at: ended_at.max(at),
            energy_wh: Some(wh),
            parking: None,
        });
    }
    kept.sort_by_key(|r| r.at);
    let session = cms_tariffs::Session {
        started_at,
        ended_at,
        meter_start_wh: t.meter_start,
        readings: &kept,
        time_zone,
    };
    // A panic in the pricing (ours or the library's) must not take the materialiser or a
    // request down with it: it is this transaction's cost that fails, logged.
    let priced = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cms_tariffs::price(&tariff, &session)
    }));
    match priced {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err("the pricing panicked".into()),
    }
}

/// The store keeps readings for as long as a session can be priced.
const _: () = assert!(
    cms_store::transaction_readings::KEPT_DAYS > cms_tariffs::MAX_SESSION_DAYS,
    "readings are kept past the longest session priced"
);

fn time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("time {text:?}: {e}"))
}
