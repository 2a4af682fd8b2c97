//! A 2.0.1 station's meter values in the REST form of a reading (the same as 1.6's, see
//! normalise.rs): 2.0.1 sends values as numbers with a unit whose `multiplier` is a power of
//! ten, and leaves out the same defaults 1.6 does. Read with serde from the station's payload,
//! which the gateway validated against the schemas.

use super::normalise::{RestMeterValue, RestSampledValue, rest_json};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::Deserialize;
use std::borrow::Cow;

/// A `MeterValueType`.
#[derive(Debug, Deserialize)]
pub struct MeterValue {
    pub timestamp: DateTime<Utc>,
    #[serde(rename = "sampledValue")]
    pub sampled_value: Vec<SampledValue>,
}

/// A `SampledValueType` (its signed meter value is not shown).
#[derive(Debug, Deserialize)]
pub struct SampledValue {
    value: serde_json::Number,
    context: Option<String>,
    measurand: Option<String>,
    phase: Option<String>,
    location: Option<String>,
    #[serde(rename = "unitOfMeasure")]
    unit_of_measure: Option<UnitOfMeasure>,
}

#[derive(Debug, Deserialize)]
struct UnitOfMeasure {
    unit: Option<String>,
    multiplier: Option<i32>,
}

impl SampledValue {
    pub fn context(&self) -> &str {
        self.context.as_deref().unwrap_or("Sample.Periodic")
    }

    fn measurand(&self) -> &str {
        self.measurand
            .as_deref()
            .unwrap_or("Energy.Active.Import.Register")
    }

    fn location(&self) -> &str {
        self.location.as_deref().unwrap_or("Outlet")
    }

    fn unit(&self) -> &str {
        let unit = self
            .unit_of_measure
            .as_ref()
            .and_then(|u| u.unit.as_deref());
        unit.unwrap_or("Wh")
    }

    /// The value with the unit's multiplier applied; `None` when decimals cannot hold it.
    fn value(&self) -> Option<Decimal> {
        let text = self.value.to_string();
        let value = Decimal::from_str_exact(&text)
            .or_else(|_| Decimal::from_scientific(&text))
            .ok()?;
        let multiplier = self
            .unit_of_measure
            .as_ref()
            .and_then(|u| u.multiplier)
            .unwrap_or(0);
        // Decimals hold 28 digits: a larger power of ten is no value of theirs.
        let scale = (0..multiplier.unsigned_abs().min(29))
            .try_fold(Decimal::ONE, |scale, _| scale.checked_mul(Decimal::TEN))?;
        let scaled = match multiplier >= 0 {
            true => value.checked_mul(scale)?,
            false => value.checked_div(scale)?,
        };
        Some(scaled.normalize())
    }
}

/// The REST `meterValue` array of these readings, and the newest sample time among them.
/// A value too large for decimals is shown as the station sent it, without its multiplier.
pub fn rest_meter_values(values: &[MeterValue]) -> (String, Option<DateTime<Utc>>) {
    let newest = values.iter().map(|v| v.timestamp).max();
    let rest: Vec<RestMeterValue<'_>> = values
        .iter()
        .map(|v| {
            let sampled = v.sampled_value.iter().map(|s| RestSampledValue {
                value: Cow::Owned(
                    s.value()
                        .map_or_else(|| s.value.to_string(), |d| d.to_string()),
                ),
                context: s.context(),
                format: "Raw",
                measurand: s.measurand(),
                phase: s.phase.as_deref(),
                location: s.location(),
                unit: s.unit(),
            });
            RestMeterValue::new(v.timestamp, sampled.collect())
        })
        .collect();
    let json = rest_json(&rest);
    (json, newest)
}

/// A reading's energy register (Wh) for pricing, as for 1.6: the whole outlet's
/// `Energy.Active.Import.Register` (no phase) in Wh or kWh, rounded to the watt-hour, with the
/// context of its sampled value.
pub fn energy_register_wh(value: &MeterValue) -> Option<(i64, &str)> {
    value.sampled_value.iter().find_map(|s| {
        let whole_outlet = s.measurand() == "Energy.Active.Import.Register"
            && s.phase.is_none()
            && s.location() == "Outlet";
        let per_wh = match s.unit() {
            "Wh" => Decimal::ONE,
            "kWh" => Decimal::ONE_THOUSAND,
            _ => return None,
        };
        let wh = s.value().filter(|_| whole_outlet)?.checked_mul(per_wh)?;
        Some((wh.round().to_i64()?, s.context()))
    })
}

/// The newest reading's energy register, as [`energy_register_wh`] reads it, and its time.
pub fn newest_energy_register_wh(values: &[MeterValue]) -> Option<(DateTime<Utc>, i64)> {
    values
        .iter()
        .filter_map(|v| Some((v.timestamp, energy_register_wh(v)?.0)))
        .max_by_key(|(at, _)| *at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(json: &str) -> Vec<MeterValue> {
        serde_json::from_str(json).expect("a valid meterValue array")
    }

    #[test]
    fn values_are_shown_as_1_6_shows_them_with_the_multiplier_applied() {
        // As the Python ocpp package's v201 stations send them: camelCase, defaults left out.
        let readings = values(
            r#"[{"timestamp":"2026-11-21T11:00:00.750+01:00","sampledValue":[
                {"value":12.5,"unitOfMeasure":{"unit":"kWh","multiplier":3}},
                {"value":1234.5},
                {"value":230.1,"measurand":"Voltage","phase":"L1-N","unitOfMeasure":{"unit":"V"},
                 "context":"Trigger","location":"Inlet"},
                {"value":16,"measurand":"Current.Import","unitOfMeasure":{"unit":"A","multiplier":-1}}]}]"#,
        );
        let (json, newest) = rest_meter_values(&readings);
        assert_eq!(
            json,
            r#"[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"12500","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"kWh"},{"value":"1234.5","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},{"value":"230.1","context":"Trigger","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Inlet","unit":"V"},{"value":"1.6","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","location":"Outlet","unit":"A"}]}]"#
        );
        assert_eq!(
            newest.unwrap().to_rfc3339(),
            "2026-11-21T10:00:00.750+00:00"
        );
        // The register for pricing: the first whole-outlet one, in Wh.
        assert_eq!(
            energy_register_wh(&readings[0]),
            Some((12_500_000, "Sample.Periodic"))
        );
    }

    #[test]
    fn the_energy_register_is_the_newest_whole_outlet_reading() {
        let readings = values(
            r#"[{"timestamp":"2026-11-21T10:05:00Z","sampledValue":[
                  {"value":9,"phase":"L1"},{"value":12.3456,"unitOfMeasure":{"unit":"kWh"},"context":"Transaction.End"}]},
                {"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":11000}]},
                {"timestamp":"2026-11-21T10:06:00Z","sampledValue":[{"value":99999,"location":"Inlet"}]}]"#,
        );
        let at = "2026-11-21T10:05:00Z".parse().unwrap();
        assert_eq!(newest_energy_register_wh(&readings), Some((at, 12_346)));
        assert_eq!(
            energy_register_wh(&readings[0]),
            Some((12_346, "Transaction.End"))
        );
        // Beyond what decimals hold: no reading, not a crash.
        let huge = values(
            r#"[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":1e300,"unitOfMeasure":{"multiplier":9}}]}]"#,
        );
        assert_eq!(newest_energy_register_wh(&huge), None);
    }
}
