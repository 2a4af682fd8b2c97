//! Building sessions and reading costs in the timeline tests.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use cms_tariffs::{ComponentKind, Cost, Reading, Session, Tariff, price, read_tariff};
use serde_json::Value;

pub fn tariff(body: Value) -> Tariff {
    read_tariff(&body).unwrap_or_else(|problems| panic!("{problems:?}"))
}

pub fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

/// A meter reading: the register at `time` (Wh).
pub fn meter(time: &str, wh: i64) -> Reading {
    Reading {
        at: at(time),
        energy_wh: Some(wh),
        parking: None,
    }
}

/// A status change: parked (SuspendedEV, Finishing) or charging again.
pub fn parked(time: &str, parking: bool) -> Reading {
    Reading {
        at: at(time),
        energy_wh: None,
        parking: Some(parking),
    }
}

/// Prices a session that started with the register at 0.
pub fn cost(tariff: &Tariff, from: &str, to: &str, readings: &[Reading], time_zone: Tz) -> Cost {
    let session = Session {
        started_at: at(from),
        ended_at: at(to),
        meter_start_wh: 0,
        readings,
        time_zone,
    };
    price(tariff, &session).unwrap_or_else(|e| panic!("{e}"))
}

/// (volume, excl_vat) of a component.
pub fn component(cost: &Cost, kind: ComponentKind) -> (&str, &str) {
    let found = cost.components.iter().find(|c| c.kind == kind);
    let found = found.unwrap_or_else(|| panic!("no {kind:?} in {cost:?}"));
    (found.volume.as_str(), found.excl_vat.as_str())
}

/// (excl_vat, incl_vat) of the total.
pub fn total(cost: &Cost) -> (&str, &str) {
    (cost.excl_vat.as_str(), cost.incl_vat.as_str())
}
