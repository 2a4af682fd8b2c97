//! A reading as a change of the store, whichever OCPP version it came in: what the batch reads
//! it for, and the change it makes (translate.rs for 1.6, translate_v201.rs for 2.0.1).

use chrono::{DateTime, Utc};
use cms_store::{EnergyReading, StateChange, format_record_time};

/// What a MeterValues record is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadingUse {
    /// The connector's latest reading, and its energy register for pricing when `energy`.
    Latest { energy: bool },
    /// Only its energy register for pricing: a newer reading is the latest.
    EnergyOnly,
}

/// A reading of a connector (a 2.0.1 EVSE) as a change, in either version: its latest with its
/// energy register (`register`, read only when wanted), or the register alone for pricing
/// (`ReadingUse::EnergyOnly`); `rest` gives the REST `meterValue` array and its newest time.
pub(super) fn reading_change(
    (identity, connector_id, at): (String, i64, String),
    use_of: ReadingUse,
    register: impl FnOnce() -> Option<(DateTime<Utc>, i64)>,
    rest: impl FnOnce() -> (String, Option<DateTime<Utc>>),
) -> Option<StateChange> {
    let energy = match use_of {
        ReadingUse::Latest { energy: false } => None,
        _ => register().map(|(at, wh)| EnergyReading {
            at: format_record_time(at),
            wh,
        }),
    };
    if use_of == ReadingUse::EnergyOnly {
        return energy.map(|energy| StateChange::TransactionEnergy {
            identity,
            connector_id,
            energy,
        });
    }
    let (meter_value, newest) = rest();
    Some(StateChange::MeterValue {
        identity,
        connector_id,
        meter_value,
        measured_at: format_record_time(newest?),
        energy,
        at,
    })
}
