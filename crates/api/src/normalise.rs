//! The REST form of a reading: the reference's `meterValue` array, with timestamps in UTC whole
//! seconds and the OCPP defaults written out, so clients need not know OCPP's defaults.

use chrono::{DateTime, SecondsFormat, Utc};
use cms_ocpp::v16::MeterValue;
use serde::Serialize;

#[derive(Serialize)]
struct RestMeterValue<'a> {
    timestamp: String,
    #[serde(rename = "sampledValue")]
    sampled_value: Vec<RestSampledValue<'a>>,
}

#[derive(Serialize)]
struct RestSampledValue<'a> {
    value: &'a str,
    context: &'static str,
    format: &'static str,
    measurand: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'static str>,
    location: &'static str,
    unit: &'static str,
}

/// The REST `meterValue` array of these readings, and the newest sample time among them.
pub fn rest_meter_values(values: &[MeterValue<'_>]) -> (String, Option<DateTime<Utc>>) {
    let newest = values.iter().map(|v| v.timestamp).max();
    let rest: Vec<RestMeterValue<'_>> = values
        .iter()
        .map(|v| RestMeterValue {
            timestamp: v.timestamp.to_rfc3339_opts(SecondsFormat::Secs, true),
            sampled_value: v
                .sampled_value
                .iter()
                .map(|s| RestSampledValue {
                    value: &s.value,
                    context: s.context().as_str(),
                    format: s.format().as_str(),
                    measurand: s.measurand().as_str(),
                    phase: s.phase.map(|p| p.as_str()),
                    location: s.location().as_str(),
                    unit: s.unit().as_str(),
                })
                .collect(),
        })
        .collect();
    let json = serde_json::to_string(&rest).unwrap_or_else(|_| "[]".to_string());
    (json, newest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_ocpp::v16::{Action, Request, parse_request};

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
