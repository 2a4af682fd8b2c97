//! Meters (endpoints 4 and 12): a `ct_meter` attached to a charger, showing the current per
//! phase that the charger measures on its supply (its Inlet `Current.Import` readings) and, when
//! the charger reports Inlet voltages too, the power drawn. Readings are sensitive data.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{charger_with_sensitive_data, forbidden_unless, not_found, path_number};
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use cms_store::meters::{CT_METER, MeterRow};
use cms_store::{StoreError, StoredMeterValue, format_record_time};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(by_chargee))
        .routes(routes!(create))
}

/// What `power` says when the readings do not give it.
pub const NO_POWER: &str = "Power information cannot be retrieved.";
/// What `latest_data.updated_at` says when there is no reading.
const NO_READING: &str = "-";

#[derive(Serialize, ToSchema)]
pub struct MeterBody {
    uuid: String,
    id: i64,
    /// `ct_meter`.
    #[serde(rename = "type")]
    kind: String,
    latest_data: LatestData,
    /// The power drawn, summed over the phases (voltage × current), as "11.04 kW"; or
    /// "Power information cannot be retrieved." when a phase's current or voltage is missing.
    power: String,
    created_at: String,
    updated_at: String,
}

/// The newest Inlet current of each phase, in A (0 for a phase without a reading).
#[derive(Debug, PartialEq, Serialize, ToSchema)]
pub struct LatestData {
    l1: f64,
    l2: f64,
    l3: f64,
    /// When the newest of these currents was measured; "-" when there is none.
    updated_at: String,
}

/// The request of endpoint 12.
#[derive(ToSchema)]
#[allow(dead_code)] // documents the request; it is read through `Input`
pub struct NewMeterRequest {
    /// Required; `ct_meter`.
    #[schema(rename = "type")]
    kind: String,
    /// Required: the id of a charger on a site of the team. One meter of a type per charger.
    charger_id: i64,
}

/// The meter attached to a charger (endpoint 4). The chargee is the charger, by uuid.
#[utoipa::path(
    get,
    path = "/api/v3/meters/chargee/{chargee}",
    tag = "Meters",
    params(("chargee" = String, Path, description = "The uuid of the charger the meter is attached to")),
    responses(
        (status = 200, body = Data<MeterBody>),
        (status = 403, body = ErrorBody,
            description = "The token lacks meters:read, or the caller lacks sensitive access"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or no meter on it"),
    ),
    security(("bearer" = ["meters:read"]), ("oauth2" = ["meters:read"]))
)]
pub async fn by_chargee(
    State(state): State<AppState>,
    caller: Caller,
    Path(chargee): Path<String>,
) -> Result<Json<Data<MeterBody>>, ApiError> {
    caller.authorize()?;
    let charger = charger_with_sensitive_data(&state, &caller, &chargee).await?;
    let meter = state
        .store
        .meter_of_charger(charger.id, CT_METER)
        .await?
        .ok_or_else(|| not_found("Meter"))?;
    Ok(Json(Data::new(meter_body(&state, meter).await?)))
}

/// Attach a meter to one of the team's chargers (endpoint 12).
#[utoipa::path(
    post,
    path = "/api/v2/teams/{team_id}/meters",
    tag = "Meters",
    params(("team_id" = i64, Path, description = "The team's id; the caller must be a member")),
    request_body = NewMeterRequest,
    responses(
        (status = 201, body = Data<MeterBody>),
        (status = 403, body = ErrorBody,
            description = "The token lacks meters:write, or the team only has access granted to the charger"),
    ),
    security(("bearer" = ["meters:write"]), ("oauth2" = ["meters:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_id): Path<String>,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<MeterBody>>), ApiError> {
    caller.authorize()?;
    let team_id: i64 = path_number(&team_id, "Team")?;
    if !state
        .store
        .meter_team_member(team_id, caller.user_id())
        .await?
    {
        return Err(not_found("Team"));
    }
    let kind = input
        .one_of("type", Rules::required(), &[CT_METER])
        .flatten();
    let charger_id = input.integer("charger_id", Rules::required()).flatten();
    input.finish()?;
    let (Some(kind), Some(charger_id)) = (kind, charger_id) else {
        return Err(ApiError::Internal("validated fields missing".into()));
    };
    let access = state
        .store
        .meter_charger_access(team_id, charger_id)
        .await?
        .ok_or_else(|| ApiError::invalid("charger_id", "The selected charger id is invalid."))?;
    // Attaching hardware changes the charger's installation: the site's owner team does it.
    forbidden_unless(access.full)?;
    let meter = match state.store.add_meter(team_id, charger_id, &kind).await {
        Err(StoreError::Conflict(_)) => {
            let message = format!("The charger already has a {kind}.");
            return Err(ApiError::invalid("charger_id", message));
        }
        other => other?,
    };
    let body = meter_body(&state, meter).await?;
    Ok((StatusCode::CREATED, Json(Data::new(body))))
}

async fn meter_body(state: &AppState, meter: MeterRow) -> Result<MeterBody, ApiError> {
    let readings = state
        .store
        .latest_readings_of_charger(meter.charger_id)
        .await?;
    let inlet = Inlet::of(&readings);
    Ok(MeterBody {
        uuid: meter.uuid,
        id: meter.id,
        kind: meter.kind,
        latest_data: inlet.latest_data(),
        power: inlet.power().unwrap_or_else(|| NO_POWER.to_string()),
        created_at: meter.created_at,
        updated_at: meter.updated_at,
    })
}

/// One sample as the stored REST `meterValue` array has it (OCPP defaults written out).
#[derive(Deserialize)]
struct StoredReading {
    timestamp: DateTime<Utc>,
    #[serde(rename = "sampledValue")]
    sampled_value: Vec<StoredSample>,
}

#[derive(Deserialize)]
struct StoredSample {
    value: String,
    measurand: String,
    phase: Option<String>,
    location: String,
}

/// A measured value and when it was measured.
type Measured = Option<(f64, DateTime<Utc>)>;

/// The newest Inlet currents and voltages of a charger, per phase L1..L3, across all of its
/// connectors (a charger usually reports its supply on connector 0, but not every one does).
#[derive(Debug, Default, PartialEq)]
struct Inlet {
    current: [Measured; 3],
    voltage: [Measured; 3],
    /// A voltage reported without a phase: it stands for every phase without its own.
    voltage_unphased: Measured,
}

impl Inlet {
    fn of(readings: &[StoredMeterValue]) -> Inlet {
        let mut inlet = Inlet::default();
        for stored in readings {
            // The materialiser wrote this JSON; a row that does not read is skipped, not fatal.
            let Ok(values) = serde_json::from_str::<Vec<StoredReading>>(&stored.meter_value) else {
                tracing::warn!(identity = %stored.identity, "unreadable stored meter value");
                continue;
            };
            for reading in &values {
                for sample in reading
                    .sampled_value
                    .iter()
                    .filter(|s| s.location == "Inlet")
                {
                    let Ok(value) = sample.value.trim().parse::<f64>() else {
                        continue;
                    };
                    let phase = sample.phase.as_deref().and_then(phase_index);
                    let slot = match (sample.measurand.as_str(), phase) {
                        ("Current.Import", Some(p)) => &mut inlet.current[p],
                        ("Voltage", Some(p)) => &mut inlet.voltage[p],
                        ("Voltage", None) if sample.phase.is_none() => &mut inlet.voltage_unphased,
                        _ => continue,
                    };
                    if slot.is_none_or(|(_, at)| reading.timestamp > at) {
                        *slot = Some((value, reading.timestamp));
                    }
                }
            }
        }
        inlet
    }

    fn latest_data(&self) -> LatestData {
        let [l1, l2, l3] = self.current.map(|c| c.map_or(0.0, |(amps, _)| amps));
        let newest = self.current.iter().flatten().map(|(_, at)| *at).max();
        LatestData {
            l1,
            l2,
            l3,
            updated_at: newest.map_or_else(|| NO_READING.to_string(), format_record_time),
        }
    }

    /// Σ voltage × current over the phases with a current, as "11.04 kW"; `None` when there is
    /// no current, or a phase with a current has no voltage.
    fn power(&self) -> Option<String> {
        let mut watts = 0.0;
        let mut phases = 0;
        for (current, voltage) in self.current.iter().zip(&self.voltage) {
            let Some((amps, _)) = current else { continue };
            let (volts, _) = voltage.or(self.voltage_unphased)?;
            watts += volts * amps;
            phases += 1;
        }
        (phases > 0).then(|| format!("{:.2} kW", watts / 1000.0))
    }
}

/// L1..L3 as 0..2: a current's phase is `L1`; a voltage's `L1-N` (or `L1`). Line-to-line
/// voltages (`L1-L2`) are not a phase's supply voltage and are left out.
fn phase_index(phase: &str) -> Option<usize> {
    match phase {
        "L1" | "L1-N" => Some(0),
        "L2" | "L2-N" => Some(1),
        "L3" | "L3-N" => Some(2),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(connector: i64, json: &str) -> StoredMeterValue {
        StoredMeterValue {
            identity: "CP-1".into(),
            connector_id: connector,
            meter_value: json.into(),
            measured_at: String::new(),
        }
    }

    fn sample(measurand: &str, phase: &str, location: &str, value: &str) -> String {
        format!(
            r#"{{"value":"{value}","context":"Sample.Periodic","format":"Raw","measurand":"{measurand}","phase":"{phase}","location":"{location}","unit":"A"}}"#
        )
    }

    fn reading(timestamp: &str, samples: &[String]) -> String {
        format!(
            r#"[{{"timestamp":"{timestamp}","sampledValue":[{}]}}]"#,
            samples.join(",")
        )
    }

    #[test]
    fn no_inlet_current_means_zeros_a_hyphen_and_no_power() {
        let outlet = reading(
            "2026-02-10T09:00:00Z",
            &[sample("Current.Import", "L1", "Outlet", "16")],
        );
        for readings in [
            vec![],
            vec![stored(1, &outlet)],
            vec![stored(0, "not json")],
        ] {
            let inlet = Inlet::of(&readings);
            let data = inlet.latest_data();
            assert_eq!((data.l1, data.l2, data.l3), (0.0, 0.0, 0.0));
            assert_eq!(data.updated_at, "-");
            assert_eq!(inlet.power(), None);
        }
    }

    #[test]
    fn the_newest_current_of_each_phase_counts_across_connectors() {
        let old = reading(
            "2026-02-10T09:00:00Z",
            &[
                sample("Current.Import", "L1", "Inlet", "10"),
                sample("Current.Import", "L2", "Inlet", "11"),
            ],
        );
        let new = reading(
            "2026-02-10T09:05:00Z",
            &[
                sample("Current.Import", "L1", "Inlet", "16.1"),
                sample("Current.Import", "L3", "Inlet", "16.3"),
            ],
        );
        let inlet = Inlet::of(&[stored(1, &new), stored(0, &old)]);
        assert_eq!(
            inlet.latest_data(),
            LatestData {
                l1: 16.1,
                l2: 11.0,
                l3: 16.3,
                updated_at: "2026-02-10T09:05:00.000000Z".into()
            }
        );
        assert_eq!(inlet.power(), None, "no voltage");
    }

    #[test]
    fn power_sums_voltage_times_current_over_the_phases() {
        let phases = reading(
            "2026-02-10T09:00:00Z",
            &[
                sample("Current.Import", "L1", "Inlet", "16"),
                sample("Current.Import", "L2", "Inlet", "16"),
                sample("Current.Import", "L3", "Inlet", "16"),
                sample("Voltage", "L1-N", "Inlet", "230"),
                sample("Voltage", "L2-N", "Inlet", "230"),
                sample("Voltage", "L3-N", "Inlet", "230"),
                sample("Voltage", "L1-L2", "Inlet", "400"),
            ],
        );
        assert_eq!(
            Inlet::of(&[stored(0, &phases)]).power().as_deref(),
            Some("11.04 kW")
        );
        let one_voltage = r#"[{"timestamp":"2026-02-10T09:00:00Z","sampledValue":[
            {"value":"10","measurand":"Current.Import","phase":"L1","location":"Inlet"},
            {"value":"10","measurand":"Current.Import","phase":"L2","location":"Inlet"},
            {"value":"230","measurand":"Voltage","location":"Inlet"}]}]"#;
        assert_eq!(
            Inlet::of(&[stored(0, one_voltage)]).power().as_deref(),
            Some("4.60 kW")
        );
        let missing_l2 = reading(
            "2026-02-10T09:00:00Z",
            &[
                sample("Current.Import", "L1", "Inlet", "16"),
                sample("Current.Import", "L2", "Inlet", "16"),
                sample("Voltage", "L1-N", "Inlet", "230"),
            ],
        );
        assert_eq!(Inlet::of(&[stored(0, &missing_l2)]).power(), None);
    }
}
