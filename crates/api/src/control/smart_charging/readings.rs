//! Currents out of a stored reading (the REST `meterValue` array): `Current.Import` by phase.

use serde::Deserialize;

#[derive(Deserialize)]
struct MeterValue {
    #[serde(rename = "sampledValue")]
    sampled_value: Vec<SampledValue>,
}

#[derive(Deserialize)]
struct SampledValue {
    value: String,
    measurand: String,
    phase: Option<String>,
    location: String,
}

/// The currents of one reading, by phase (`""` when the charger named none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Currents {
    pub phases: Vec<(String, f64)>,
}

impl Currents {
    /// The highest phase: the one nearest its fuse.
    pub fn highest(&self) -> Option<f64> {
        self.phases.iter().map(|(_, a)| *a).reduce(f64::max)
    }

    /// The phases as a JSON object, for the status endpoint.
    pub fn to_json(&self) -> String {
        let map: serde_json::Map<String, serde_json::Value> = self
            .phases
            .iter()
            .map(|(phase, amps)| {
                let name = if phase.is_empty() { "total" } else { phase };
                (name.to_string(), serde_json::json!(amps))
            })
            .collect();
        serde_json::Value::Object(map).to_string()
    }
}

/// The `Current.Import` samples at `location` (`Inlet` for a CT meter, `Outlet` for a
/// connector) of the newest sample set that has any; `None` when there are none. A phase to
/// neutral (`L1-N`) counts as its phase; line to line voltages' phases do not apply to currents.
pub fn currents(meter_value: &str, location: &str) -> Option<Currents> {
    let values: Vec<MeterValue> = serde_json::from_str(meter_value).ok()?;
    values.iter().rev().find_map(|value| {
        let phases: Vec<(String, f64)> = value
            .sampled_value
            .iter()
            .filter(|s| s.measurand == "Current.Import" && s.location == location)
            .filter_map(|s| {
                let amps: f64 = s.value.trim().parse().ok()?;
                let phase = s.phase.as_deref().unwrap_or("");
                let phase = phase.strip_suffix("-N").unwrap_or(phase);
                amps.is_finite().then(|| (phase.to_string(), amps.max(0.0)))
            })
            .collect();
        (!phases.is_empty()).then_some(Currents { phases })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CT: &str = r#"[{"timestamp":"2026-11-24T10:00:00Z","sampledValue":[
        {"value":"1234","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},
        {"value":"41.5","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Inlet","unit":"A"},
        {"value":"44","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L2-N","location":"Inlet","unit":"A"},
        {"value":"7","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"}
    ]}]"#;

    #[test]
    fn an_inlet_reading_gives_each_phase_and_the_highest() {
        let inlet = currents(CT, "Inlet").unwrap();
        assert_eq!(
            inlet.phases,
            vec![("L1".to_string(), 41.5), ("L2".to_string(), 44.0)]
        );
        assert_eq!(inlet.highest(), Some(44.0));
        assert_eq!(inlet.to_json(), r#"{"L1":41.5,"L2":44.0}"#);
        assert_eq!(currents(CT, "Outlet").unwrap().highest(), Some(7.0));
    }

    #[test]
    fn no_current_or_nonsense_is_none() {
        assert_eq!(currents("[]", "Inlet"), None);
        assert_eq!(currents("not json", "Inlet"), None);
        let energy_only = r#"[{"timestamp":"x","sampledValue":[{"value":"1","measurand":"Energy.Active.Import.Register","location":"Outlet"}]}]"#;
        assert_eq!(currents(energy_only, "Outlet"), None);
    }
}
