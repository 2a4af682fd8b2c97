//! Chargers: the list (endpoint 11) and a connector's latest meter value (endpoint 8).

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::pagination::{PER_PAGE, Page, page_number};
use crate::http::schema::{ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use cms_store::{ChargerRow, Scope};
use serde_json::{Value, json};
use std::collections::HashMap;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(latest_meter_value))
}

/// List chargers (endpoint 11): the chargers of every site the caller's teams reach, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/chargers",
    tag = "Chargers",
    params(("page" = Option<i64>, Query, description = "Page number, from 1")),
    responses(
        (status = 200, description = "A page of chargers", body = Page<serde_json::Value>),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read"),
        (status = 422, body = ValidationErrorBody),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<Value>>, ApiError> {
    caller.require(Scope::CHARGERS_READ)?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let offset = (page - 1).saturating_mul(PER_PAGE);
    let (rows, total) = state
        .store
        .chargers_visible_to(caller.user_id(), None, PER_PAGE, offset)
        .await?;
    let data = rows.iter().map(charger_json).collect();
    Ok(Json(Page::new("/api/v3/chargers", page, total, data)))
}

/// The latest meter value of a connector (endpoint 8), not wrapped in `data`.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}/latest-metervalue",
    tag = "Chargers > Connectors",
    params(
        ("charger_uuid" = String, Path),
        ("connector_id" = String, Path, description = "The connector's number on its charger"),
    ),
    responses(
        (status = 200, description = "`connectorId` and the `meterValue` array", body = serde_json::Value),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ),
    security(("bearer" = ["meter-values:read"]), ("oauth2" = ["meter-values:read"]))
)]
pub async fn latest_meter_value(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, connector_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    caller.require(Scope::METER_VALUES_READ)?;
    let charger = state
        .store
        .charger_visible_to(caller.user_id(), &charger_uuid)
        .await?
        .ok_or_else(|| ApiError::NotFound("Charger not found.".into()))?;
    let connector_missing = || ApiError::NotFound("Connector not found.".into());
    let connector_id: u32 = connector_id.parse().map_err(|_| connector_missing())?;
    let meter_value = match state.cache.get(&charger.identity, connector_id) {
        Some(reading) => reading.meter_value,
        None if state
            .store
            .connector_known(charger.id, connector_id.into())
            .await? =>
        {
            bytes::Bytes::from_static(b"[]")
        }
        None => return Err(connector_missing()),
    };
    // The cached array is already JSON: frame it rather than parse and re-serialise it.
    let mut body = Vec::with_capacity(meter_value.len() + 40);
    body.extend_from_slice(format!("{{\"connectorId\":{connector_id},\"meterValue\":").as_bytes());
    body.extend_from_slice(&meter_value);
    body.push(b'}');
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

/// A charger as the reference lists it. The caller reaches it through a team it belongs to,
/// which owns the charger's site: that is full access.
pub fn charger_json(c: &ChargerRow) -> Value {
    json!({
        "uuid": c.uuid,
        "id": c.id,
        "identity": c.identity,
        "reference": c.reference,
        "connection_status": c.connection_status,
        "status": c.status,
        "error": c.error,
        "error_info": c.error_info,
        "vendor_id": c.vendor_id,
        "vendor_error_code": c.vendor_error_code,
        "firmware_version": c.firmware_version,
        "server": c.server,
        "last_connection_at": c.last_connection_at,
        "last_disconnection_at": c.last_disconnection_at,
        "last_heartbeat_at": c.last_heartbeat_at,
        "setup_pending": c.setup_pending,
        "setup_completed": c.setup_completed,
        "blocked": c.blocked,
        "max_current": c.max_current,
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "licenses": {"smart": c.license_smart, "pro": c.license_pro},
        "permissions": {"basic": true, "sensitive": true, "full": true},
    })
}
