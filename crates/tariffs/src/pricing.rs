//! Pricing a session: cms's session as an OCPI CDR, priced by ocpi-tariffs.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use ocpi_tariffs::{Version, cdr, price as engine, tariff};

use crate::cost::{Cost, Priced, cost};
use crate::model::{ComponentKind, Tariff};
use crate::session::Session;
use crate::{ocpi, periods};

/// Why a session could not be priced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PricingError {
    #[error("the session ends at {ended_at}, before it starts at {started_at}")]
    EndsBeforeStart {
        started_at: DateTime<Utc>,
        ended_at: DateTime<Utc>,
    },
    /// ocpi-tariffs refused the tariff or the session (its message).
    #[error("the pricing engine refused the {0}")]
    Engine(String),
    /// A session longer than [`MAX_SESSION_DAYS`]: a charger whose clock was reset (a start in
    /// 1970) would otherwise be billed for decades, at the cost of cutting every day of them.
    #[error("the session lasts {0} days, more than {MAX_SESSION_DAYS}")]
    TooLong(i64),
}

/// The longest session priced.
pub const MAX_SESSION_DAYS: i64 = 31;

/// The cost of a session under a tariff: decimal arithmetic only, amounts rounded to the cent
/// (half away from zero) at the end.
pub fn price(tariff: &Tariff, session: &Session) -> Result<Cost, PricingError> {
    if session.ended_at < session.started_at {
        return Err(PricingError::EndsBeforeStart {
            started_at: session.started_at,
            ended_at: session.ended_at,
        });
    }
    let days = (session.ended_at - session.started_at).num_days();
    if days > MAX_SESSION_DAYS {
        return Err(PricingError::TooLong(days));
    }
    let stretches = periods::stretches(tariff, session);
    let priced = run(
        &ocpi::tariff_json(tariff),
        &ocpi::cdr_json(&stretches),
        session.time_zone,
    )?;
    let kinds = in_order(
        tariff
            .elements
            .iter()
            .flat_map(|e| e.price_components.iter().map(|c| c.kind)),
    );
    Ok(cost(&priced, &tariff.currency, &kinds))
}

/// Prices an OCPI 2.2.1 CDR under an OCPI 2.2.1 tariff, both JSON text, through the same
/// engine call and the same rounding and components as [`price`]: for testing against
/// OCPI's own worked examples.
#[doc(hidden)]
pub fn price_ocpi(tariff_json: &str, cdr_json: &str, time_zone: Tz) -> Result<Cost, PricingError> {
    let priced = run(tariff_json, cdr_json, time_zone)?;
    let tariff: serde_json::Value = serde_json::from_str(tariff_json)
        .map_err(|e| PricingError::Engine(format!("tariff: {e}")))?;
    let types = tariff["elements"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|element| {
            element["price_components"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["type"].as_str())
        });
    let kinds = in_order(
        types.filter_map(|name| ComponentKind::ALL.into_iter().find(|k| k.name() == name)),
    );
    let currency = priced.report.tariff_used.currency.into_str();
    Ok(cost(&priced, currency, &kinds))
}

/// Each kind once, in order of first appearance.
fn in_order(kinds: impl Iterator<Item = ComponentKind>) -> Vec<ComponentKind> {
    let mut seen = Vec::with_capacity(ComponentKind::ALL.len());
    for kind in kinds {
        if !seen.contains(&kind) {
            seen.push(kind);
        }
    }
    seen
}

fn run(tariff_json: &str, cdr_json: &str, time_zone: Tz) -> Result<Priced, PricingError> {
    let tariff = tariff::parse_with_version(tariff_json, Version::V221)
        .map_err(|e| PricingError::Engine(format!("tariff: {e}")))?
        .tariff;
    let cdr = cdr::parse_with_version(cdr_json, Version::V221)
        .map_err(|e| PricingError::Engine(format!("session: {e}")))?
        .cdr;
    let (report, warnings) = cdr::price(&cdr, engine::TariffSource::single(tariff), time_zone)
        .map_err(|e| PricingError::Engine(format!("session: {}", e.into_parts().0)))?
        .into_parts();
    // The engine's other warnings are about the CDR's form (the placeholder total, no
    // country), not its price.
    let clamped = warnings.iter().any(|group| {
        group.to_parts().1.into_iter().any(|warning| {
            matches!(
                warning,
                engine::Warning::Tariff(
                    tariff::Warning::TotalCostClampedToMin | tariff::Warning::TotalCostClampedToMax
                )
            )
        })
    });
    Ok(Priced { report, clamped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Reading, Session, read_tariff, time_zone};

    #[test]
    fn a_session_of_more_than_a_month_is_not_priced() {
        let tariff = read_tariff(&serde_json::json!({"currency": "EUR", "elements": [
            {"price_components": [{"type": "TIME", "price": "1.00", "step_size": 1}]}]}))
        .expect("a tariff");
        let ended_at = DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let session = |days: i64| Session {
            started_at: ended_at - chrono::TimeDelta::days(days),
            ended_at,
            meter_start_wh: 0,
            readings: &[] as &[Reading],
            time_zone: time_zone("UTC").unwrap(),
        };
        // A charger whose clock went back to 1970 would be billed for 56 years.
        assert!(matches!(
            price(&tariff, &session(20_000)),
            Err(PricingError::TooLong(20_000))
        ));
        let month = price(&tariff, &session(MAX_SESSION_DAYS)).expect("priced");
        assert_eq!(month.excl_vat, "744.00", "31 days × 24 h × 1.00");
    }
}
