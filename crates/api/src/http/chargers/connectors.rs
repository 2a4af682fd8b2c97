//! A charger's connectors: the list, and the settings an operator gives one (endpoint 7).
//!
//! Connectors appear when the charger reports them (StatusNotification), but an operator may
//! set one up before installation: any number from 1 to [`MAX_CONNECTOR`] is accepted, and a
//! connector not reported yet is created `Unavailable` with `NoError`. Connector 0 is the
//! charger itself, never a connector of its own.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{charger_access, forbidden_unless, not_found, visible_charger};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use cms_store::ConnectorRow;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_connectors))
        .routes(routes!(update_connector))
}

/// The highest connector number an operator may set up ahead of the charger reporting it: the
/// same bound the gateway puts on what a charger reports.
pub const MAX_CONNECTOR: i64 = cms_ocpp::v16::MAX_CONNECTOR_ID as i64;

/// The phase rotations a connector may be wired with: the order in which the charger's L1, L2
/// and L3 meet the grid's R, S and T, for three-, two- and single-phase connections.
pub const PHASE_ROTATIONS: [&str; 15] = [
    "RST", "RTS", "SRT", "STR", "TRS", "TSR", "RS", "RT", "SR", "ST", "TR", "TS", "R", "S", "T",
];

/// A connector, as the reference shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Connector {
    pub id: i64,
    pub charger_id: i64,
    /// The connector's number on its charger, from 1.
    pub connector_id: i64,
    /// As the charger last reported it (`Available`, `Charging`, ...); `Unavailable` until then.
    pub status: String,
    /// The OCPP error code the charger last reported; `NoError` until then.
    pub error: String,
    #[schema(required = true)]
    pub error_info: Option<String>,
    #[schema(required = true)]
    pub vendor_id: Option<String>,
    #[schema(required = true)]
    pub vendor_error_code: Option<String>,
    /// Amperes.
    #[schema(required = true)]
    pub max_amperage: Option<i64>,
    /// Volts.
    #[schema(required = true)]
    pub max_voltage: Option<i64>,
    #[schema(required = true)]
    pub standard: Option<String>,
    #[schema(required = true)]
    pub format: Option<String>,
    #[schema(required = true)]
    pub power_type: Option<String>,
    #[schema(required = true, value_type = Option<PhaseRotation>)]
    pub phase_rotation: Option<String>,
    /// A 2.0.1 station's connector is its EVSE: its evseId (= `connector_id`). Null for a 1.6
    /// charger.
    #[schema(required = true)]
    pub evse_id: Option<i64>,
    /// The connector within the EVSE that the station's newest StatusNotification named (2.0.1;
    /// null for 1.6, and until the station reports one).
    #[schema(required = true)]
    pub evse_connector_id: Option<i64>,
    /// The 2.0.1 `connectorStatus` the station last reported (`Available`, `Occupied`,
    /// `Reserved`, `Unavailable`, `Faulted`), from which `status` is mapped: `Occupied` is
    /// `Charging` while a transaction runs on the EVSE, `Preparing` otherwise. Null for 1.6.
    #[schema(required = true)]
    pub ocpp_status: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<ConnectorRow> for Connector {
    fn from(c: ConnectorRow) -> Self {
        Connector {
            id: c.id,
            charger_id: c.charger_id,
            connector_id: c.connector_id,
            status: c.status,
            error: c.error,
            error_info: c.error_info,
            vendor_id: c.vendor_id,
            vendor_error_code: c.vendor_error_code,
            max_amperage: c.max_amperage,
            max_voltage: c.max_voltage,
            standard: c.standard,
            format: c.format,
            power_type: c.power_type,
            phase_rotation: c.phase_rotation,
            evse_id: c.evse_id,
            evse_connector_id: c.evse_connector_id,
            ocpp_status: c.ocpp_status,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

/// The allowed phase rotations (see [`PHASE_ROTATIONS`]).
#[derive(ToSchema)]
#[schema(rename_all = "UPPERCASE")]
#[allow(dead_code)] // Documents the allowed values.
pub enum PhaseRotation {
    Rst,
    Rts,
    Srt,
    Str,
    Trs,
    Tsr,
    Rs,
    Rt,
    Sr,
    St,
    Tr,
    Ts,
    R,
    S,
    T,
}

/// The body of `PUT /api/v3/chargers/{charger_uuid}/connectors/{connector_id}`: both fields
/// are required.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct ConnectorSettingsBody {
    phase_rotation: PhaseRotation,
    /// Amperes, 1 to 1000.
    #[schema(minimum = 1, maximum = 1000)]
    max_amperage: i64,
}

/// The connectors of a charger, by number, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/connectors",
    tag = "Chargers > Connectors",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the charger's connectors", body = Page<Connector>),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list_connectors(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<Connector>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    // Who sees it from memory; the connectors as held, checked against the store at most
    // every 0.1 s (crate::http::charger_rows).
    let charger = charger_access(&state, &caller, &charger_uuid).await?;
    let all = state
        .charger_rows
        .connectors(&state.store, charger.id)
        .await?;
    let offset = usize::try_from(page_offset(page)).unwrap_or(usize::MAX);
    let data = all
        .iter()
        .skip(offset)
        .take(PER_PAGE as usize)
        .cloned()
        .map(Connector::from)
        .collect();
    let path = format!("/api/v3/chargers/{charger_uuid}/connectors");
    Ok(Json(Page::new(&path, page, all.len() as i64, data)))
}

/// Set a connector's phase rotation and maximum current (endpoint 7). A connector the charger
/// has not reported yet (numbers 1 to 99) is created `Unavailable`; what the charger reports
/// later changes its status, never these settings.
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}",
    tag = "Chargers > Connectors",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("connector_id" = i64, Path, minimum = 1, maximum = 99, description = "The connector's number on its charger"),
    ),
    request_body = ConnectorSettingsBody,
    responses(
        (status = 200, description = "The connector", body = Data<Connector>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller's team does not own the charger's site"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not a connector number from 1 to 99"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn update_connector(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, connector_id)): Path<(String, String)>,
    mut input: Input,
) -> Result<Json<Data<Connector>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let connector_id = connector_id
        .parse::<i64>()
        .ok()
        .filter(|n| (1..=MAX_CONNECTOR).contains(n))
        .ok_or_else(|| not_found("Connector"))?;
    forbidden_unless(charger.permissions.full)?;
    let phase_rotation = input
        .one_of("phase_rotation", Rules::required(), &PHASE_ROTATIONS)
        .flatten();
    let max_amperage = input
        .integer("max_amperage", Rules::required().between(1.0, 1000.0))
        .flatten();
    input.finish()?;
    let (Some(phase_rotation), Some(max_amperage)) = (phase_rotation, max_amperage) else {
        return Err(ApiError::Internal(
            "validation passed without the connector's settings".into(),
        ));
    };
    let row = state
        .store
        .configure_connector(charger.id, connector_id, &phase_rotation, max_amperage)
        .await?;
    Ok(Json(Data::new(row.into())))
}

#[cfg(test)]
mod tests {
    use super::{PHASE_ROTATIONS, PhaseRotation};

    #[test]
    fn the_documented_phase_rotations_are_the_accepted_ones() {
        let schema = <PhaseRotation as utoipa::PartialSchema>::schema();
        let schema = serde_json::to_value(schema).expect("a schema serialises");
        assert_eq!(schema["enum"], serde_json::json!(PHASE_ROTATIONS));
    }
}
