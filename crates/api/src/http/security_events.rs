//! Chargers > Security: the security events a station told of (SecurityEventNotification,
//! 2.0.1 and 1.6's security extension), newest first; the newest 1,000 of each are kept
//! (docs/ocpp201.md "Security").

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::charger_with_sensitive_data;
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use cms_store::security::SecurityEventRow;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// A security event of a station.
#[derive(Debug, Serialize, ToSchema)]
pub struct SecurityEventBody {
    /// The event's type, e.g. `TamperDetectionActivated` (OCPP 2.0.1's Appendix 1).
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it happened, by the station's clock.
    pub timestamp: String,
    /// What the station added to it.
    pub tech_info: Option<String>,
    /// Whether OCPP 2.0.1's Appendix 1 marks the type critical.
    pub critical: bool,
    /// When cms received it.
    pub received_at: String,
}

impl From<SecurityEventRow> for SecurityEventBody {
    fn from(row: SecurityEventRow) -> Self {
        SecurityEventBody {
            event_type: row.event_type,
            timestamp: row.occurred_at,
            tech_info: row.tech_info,
            critical: row.critical != 0,
            received_at: row.received_at,
        }
    }
}

/// The station's security events, newest (last received) first.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/security-events",
    tag = "Chargers > Security",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of security events", body = Page<SecurityEventBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
        (status = 422, body = ValidationErrorBody, description = "`page` is invalid: not an integer of 1 or more"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<SecurityEventBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    // As the actions log: who may read what happened at the station.
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let (rows, total) = state
        .store
        .security_events_page(charger.id, PER_PAGE, page_offset(page))
        .await?;
    let data = rows.into_iter().map(SecurityEventBody::from).collect();
    let path = format!("/api/v3/chargers/{charger_uuid}/security-events");
    Ok(Json(Page::new(&path, page, total, data)))
}
