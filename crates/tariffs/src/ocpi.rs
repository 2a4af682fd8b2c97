//! The OCPI 2.2.1 JSON the pricing engine (ocpi-tariffs) reads: it takes JSON text only.
//!
//! Every number is written from its decimal text (serde_json keeps number text as is here),
//! never through a float.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Map, Number, Value, json};

use crate::model::{PriceLimit, Restrictions, Tariff, TariffElement};
use crate::periods::Stretch;
use crate::session::instant;

/// OCPI wants the CPO's identity on a tariff; it prices nothing. The engine takes assigned
/// ISO 3166-1 codes only (not the user-assigned "ZZ"), hence a real one. The CDR goes without:
/// the engine only warns about that.
const COUNTRY_CODE: &str = "NL";
const PARTY_ID: &str = "CMS";

/// ISO 4217's "no currency": pricing does not depend on the currency, and the engine's table
/// of codes lags ISO's (no XCG, no ZWG), so the engine is not told ours.
const NO_CURRENCY: &str = "XXX";

/// The engine keeps durations as i64 milliseconds and panics beyond; any longer restriction
/// means the same for a real session.
const MAX_DURATION_S: u64 = 1_000_000_000_000;

const MS_PER_HOUR: i64 = 3_600_000;

/// A decimal as a JSON number with exactly its digits.
fn number(d: Decimal) -> Value {
    Value::Number(Number::from_str(&d.to_string()).expect("a decimal's text is a JSON number"))
}

pub(crate) fn tariff_json(tariff: &Tariff) -> String {
    let mut fields = Map::new();
    fields.insert("country_code".into(), COUNTRY_CODE.into());
    fields.insert("party_id".into(), PARTY_ID.into());
    fields.insert("id".into(), "cms".into());
    fields.insert("currency".into(), NO_CURRENCY.into());
    fields.insert(
        "elements".into(),
        tariff.elements.iter().map(element).collect(),
    );
    for (key, limit) in [
        ("min_price", &tariff.min_price),
        ("max_price", &tariff.max_price),
    ] {
        if let Some(limit) = limit {
            fields.insert(key.into(), price_limit(limit));
        }
    }
    Value::Object(fields).to_string()
}

fn price_limit(limit: &PriceLimit) -> Value {
    let mut fields = Map::new();
    fields.insert("excl_vat".into(), number(limit.excl_vat));
    if let Some(incl_vat) = limit.incl_vat {
        fields.insert("incl_vat".into(), number(incl_vat));
    }
    Value::Object(fields)
}

fn element(element: &TariffElement) -> Value {
    let components: Vec<Value> = element
        .price_components
        .iter()
        .map(|c| {
            let mut fields = Map::new();
            fields.insert("type".into(), c.kind.name().into());
            fields.insert("price".into(), number(c.price));
            if let Some(vat) = c.vat {
                fields.insert("vat".into(), number(vat));
            }
            fields.insert("step_size".into(), c.step_size.into());
            Value::Object(fields)
        })
        .collect();
    let mut fields = Map::new();
    fields.insert("price_components".into(), components.into());
    if let Some(restrictions) = &element.restrictions {
        fields.insert("restrictions".into(), restrictions_json(restrictions));
    }
    Value::Object(fields)
}

fn restrictions_json(r: &Restrictions) -> Value {
    let mut fields = Map::new();
    let texts = [
        ("start_time", &r.start_time),
        ("end_time", &r.end_time),
        ("start_date", &r.start_date),
        ("end_date", &r.end_date),
    ];
    for (key, text) in texts {
        if let Some(text) = text {
            fields.insert(key.into(), text.as_str().into());
        }
    }
    let amounts = [
        ("min_kwh", r.min_kwh),
        ("max_kwh", r.max_kwh),
        ("min_current", r.min_current),
        ("max_current", r.max_current),
        ("min_power", r.min_power),
        ("max_power", r.max_power),
    ];
    for (key, amount) in amounts {
        if let Some(amount) = amount {
            fields.insert(key.into(), number(amount));
        }
    }
    for (key, seconds) in [
        ("min_duration", r.min_duration),
        ("max_duration", r.max_duration),
    ] {
        if let Some(seconds) = seconds {
            fields.insert(key.into(), seconds.min(MAX_DURATION_S).into());
        }
    }
    if let Some(days) = &r.day_of_week {
        fields.insert(
            "day_of_week".into(),
            days.iter().map(|d| d.name()).collect(),
        );
    }
    Value::Object(fields)
}

/// Exact hours of a whole number of milliseconds (rust_decimal's 28 digits; the engine turns
/// them back into the same milliseconds).
pub(crate) fn hours(ms: i64) -> Decimal {
    Decimal::from(ms) / Decimal::from(MS_PER_HOUR)
}

fn kwh(wh: Decimal) -> Decimal {
    wh / Decimal::ONE_THOUSAND
}

fn timestamp(ms: i64) -> String {
    instant(ms).format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A CDR of the stretches. Its total_cost is a placeholder: the engine reports the CDR's own
/// totals beside its calculation and requires them to be there, not to be right.
pub(crate) fn cdr_json(stretches: &[Stretch]) -> String {
    let start = stretches.first().map_or(0, |s| s.start);
    let end = stretches.last().map_or(0, |s| s.end);
    let energy: Decimal = stretches.iter().map(|s| s.energy_wh).sum();
    let parking: i64 = stretches
        .iter()
        .filter(|s| s.parking)
        .map(Stretch::millis)
        .sum();
    let periods: Vec<Value> = stretches.iter().map(period).collect();
    json!({
        "currency": NO_CURRENCY,
        "start_date_time": timestamp(start),
        "end_date_time": timestamp(end),
        "total_cost": { "excl_vat": 0 },
        "total_energy": number(kwh(energy)),
        "total_time": number(hours(end - start)),
        "total_parking_time": number(hours(parking)),
        "charging_periods": periods,
    })
    .to_string()
}

/// ENERGY always; TIME or PARKING_TIME; the average power as both MIN_POWER and MAX_POWER.
/// No currents: cms records none per stretch.
fn period(stretch: &Stretch) -> Value {
    let time = if stretch.parking {
        "PARKING_TIME"
    } else {
        "TIME"
    };
    let power = number(stretch.power_kw().normalize());
    json!({
        "start_date_time": timestamp(stretch.start),
        "dimensions": [
            { "type": "ENERGY", "volume": number(kwh(stretch.energy_wh).normalize()) },
            { "type": time, "volume": number(hours(stretch.millis())) },
            { "type": "MIN_POWER", "volume": power },
            { "type": "MAX_POWER", "volume": power },
        ],
    })
}
