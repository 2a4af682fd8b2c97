//! A transaction's cost as the REST API shows it (crates/api/src/control/pricing.rs, whose
//! steps this follows one for one): the written final cost of a stopped transaction, else its
//! price under the tariff it started under up to its stop, or up to now while it runs. The
//! API prices on every read and cms-api depends on this crate, not the other way round, hence
//! the second copy of the adaptation to cms-tariffs; docs/decisions.md tells why, and the
//! end-to-end test of OCPI sessions holds the two to the same figure.

use chrono::{DateTime, Utc};
use cms_store::transaction_readings::TransactionReading;
use cms_store::transactions::TransactionRow;
use serde_json::Value;

/// The transaction's cost (the API's JSON: currency, excl_vat, incl_vat, components); null when
/// it took no tariff or cannot be priced.
pub fn cost_of(t: &TransactionRow, readings: &[TransactionReading], now: DateTime<Utc>) -> Value {
    if let Some(stored) = &t.cost {
        return serde_json::from_str(stored).unwrap_or(Value::Null);
    }
    let Some(tariff) = t.tariff.as_deref() else {
        return Value::Null;
    };
    match price(t, tariff, readings, now) {
        Ok(cost) => serde_json::to_value(cost).unwrap_or(Value::Null),
        Err(e) => {
            tracing::warn!(transaction = t.id, error = %e, "cannot price an OCPI session");
            Value::Null
        }
    }
}

fn price(
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
    // A panic in the pricing must not take the dispatcher down: this session's cost fails.
    let priced = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cms_tariffs::price(&tariff, &session)
    }));
    match priced {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err("the pricing panicked".into()),
    }
}

fn time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("time {text:?}: {e}"))
}
