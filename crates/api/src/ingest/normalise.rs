//! The REST form of a reading: the reference's `meterValue` array, with timestamps in UTC whole
//! seconds and the OCPP defaults written out, so clients need not know OCPP's defaults.

use chrono::{DateTime, SecondsFormat, Utc};
use cms_ocpp::v16::{Location, Measurand, MeterValue, UnitOfMeasure, ValueFormat};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::Serialize;
use std::borrow::Cow;

/// One reading in REST form; also 2.0.1's (normalise_v201.rs).
#[derive(Serialize)]
pub(crate) struct RestMeterValue<'a> {
    timestamp: String,
    #[serde(rename = "sampledValue")]
    sampled_value: Vec<RestSampledValue<'a>>,
}

#[derive(Serialize)]
pub(crate) struct RestSampledValue<'a> {
    pub value: Cow<'a, str>,
    pub context: &'a str,
    pub format: &'a str,
    pub measurand: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'a str>,
    pub location: &'a str,
    pub unit: &'a str,
}

impl<'a> RestMeterValue<'a> {
    /// The reading sampled at `timestamp`, in UTC whole seconds.
    pub fn new(timestamp: DateTime<Utc>, sampled_value: Vec<RestSampledValue<'a>>) -> Self {
        RestMeterValue {
            timestamp: timestamp.to_rfc3339_opts(SecondsFormat::Secs, true),
            sampled_value,
        }
    }
}

/// The REST `meterValue` array as JSON text.
pub(crate) fn rest_json(rest: &[RestMeterValue<'_>]) -> String {
    serde_json::to_string(rest).unwrap_or_else(|_| "[]".to_string())
}

/// The REST `meterValue` array of these readings, and the newest sample time among them.
pub fn rest_meter_values(values: &[MeterValue<'_>]) -> (String, Option<DateTime<Utc>>) {
    let newest = values.iter().map(|v| v.timestamp).max();
    let rest: Vec<RestMeterValue<'_>> = values
        .iter()
        .map(|v| {
            let sampled = v.sampled_value.iter().map(|s| RestSampledValue {
                value: Cow::Borrowed(&s.value),
                context: s.context().as_str(),
                format: s.format().as_str(),
                measurand: s.measurand().as_str(),
                phase: s.phase.map(|p| p.as_str()),
                location: s.location().as_str(),
                unit: s.unit().as_str(),
            });
            RestMeterValue::new(v.timestamp, sampled.collect())
        })
        .collect();
    let json = rest_json(&rest);
    (json, newest)
}

/// The energy register (Wh) the readings end on, for pricing: of the newest reading that has
/// one, the whole outlet's `Energy.Active.Import.Register` (no phase), a plain number in Wh or
/// kWh, read in decimal and rounded to the watt-hour. `None` when no reading has one.
pub fn energy_register_wh(values: &[MeterValue<'_>]) -> Option<(DateTime<Utc>, i64)> {
    values
        .iter()
        .filter_map(|v| {
            let wh = v.sampled_value.iter().find_map(|s| {
                let whole_outlet = s.measurand() == Measurand::EnergyActiveImportRegister
                    && s.phase.is_none()
                    && s.location() == Location::Outlet
                    && s.format() == ValueFormat::Raw;
                let per_wh = match s.unit() {
                    UnitOfMeasure::Wh => Decimal::ONE,
                    UnitOfMeasure::KWh => Decimal::ONE_THOUSAND,
                    _ => return None,
                };
                let value: Decimal = s.value.parse().ok().filter(|_| whole_outlet)?;
                value.checked_mul(per_wh)?.round().to_i64()
            })?;
            Some((v.timestamp, wh))
        })
        .max_by_key(|(at, _)| *at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_ocpp::v16::{Action, Request, parse_request};

    fn readings(payload: &str) -> Option<(DateTime<Utc>, i64)> {
        let Ok(Request::MeterValues(request)) = parse_request(Action::MeterValues, payload) else {
            panic!("valid MeterValues: {payload}");
        };
        energy_register_wh(&request.meter_value)
    }

    #[test]
    fn the_energy_register_is_the_newest_whole_outlet_reading_in_wh() {
        let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc);
        // Defaults: the measurand is the register, in Wh, at the outlet.
        let plain = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"1234.6"}]}]}"#;
        assert_eq!(readings(plain), Some((at("2026-11-21T10:00:00Z"), 1235)));
        // kWh, and the newest reading wins whatever the order; phases and the inlet do not count.
        let mixed = r#"{"connectorId":1,"meterValue":[
            {"timestamp":"2026-11-21T10:05:00Z","sampledValue":[{"value":"9","measurand":"Energy.Active.Import.Register","phase":"L1"},{"value":"12.3456","unit":"kWh"}]},
            {"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"11000"}]},
            {"timestamp":"2026-11-21T10:06:00Z","sampledValue":[{"value":"7","measurand":"Current.Import","unit":"A"},{"value":"99999","location":"Inlet"}]}]}"#;
        assert_eq!(readings(mixed), Some((at("2026-11-21T10:05:00Z"), 12346)));
        // A register beyond what decimals hold is no reading, not a crash.
        let huge = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"79228162514264337593543950335","unit":"kWh"}]}]}"#;
        assert_eq!(readings(huge), None);
        // Signed data is not a number to price with.
        let signed = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"AbC=","format":"SignedData"}]}]}"#;
        assert_eq!(readings(signed), None);
    }

    #[test]
    fn defaults_are_written_out_and_times_become_utc_seconds() {
        let payload = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T11:00:00.750+01:00","sampledValue":[{"value":"12.5"},{"value":"230.1","measurand":"Voltage","phase":"L1-N","unit":"V","context":"Trigger","location":"Inlet"}]}]}"#;
        let Ok(Request::MeterValues(request)) = parse_request(Action::MeterValues, payload) else {
            panic!("valid MeterValues");
        };
        let (json, newest) = rest_meter_values(&request.meter_value);
        assert_eq!(
            json,
            r#"[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"12.5","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},{"value":"230.1","context":"Trigger","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Inlet","unit":"V"}]}]"#
        );
        assert_eq!(
            newest.unwrap().to_rfc3339(),
            "2026-11-21T10:00:00.750+00:00"
        );
    }
}
