//! Chargers > Security: the certificates cms signed for a station (SignCertificate answered by
//! CertificateSigned), newest first; the newest is the station's current one, renewed before
//! it ends (docs/ocpp201.md "Security").

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::charger_with_sensitive_data;
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use cms_store::security::StationCertificateRow;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// A certificate cms signed for the station.
#[derive(Debug, Serialize, ToSchema)]
pub struct StationCertificateBody {
    /// The serial number, hexadecimal.
    pub serial: String,
    /// When it ends.
    pub not_after: String,
    /// SHA-256 of the certificate (DER), hexadecimal.
    pub fingerprint: String,
    pub signed_at: String,
    /// When cms last asked the station for a new CSR to renew it.
    pub renewal_asked_at: Option<String>,
}

impl From<StationCertificateRow> for StationCertificateBody {
    fn from(row: StationCertificateRow) -> Self {
        StationCertificateBody {
            serial: row.serial,
            not_after: row.not_after,
            fingerprint: row.fingerprint,
            signed_at: row.signed_at,
            renewal_asked_at: row.renewal_asked_at,
        }
    }
}

/// The certificates cms signed for the station, newest first.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/certificates",
    tag = "Chargers > Security",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of certificates", body = Page<StationCertificateBody>),
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
) -> Result<Json<Page<StationCertificateBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let (rows, total) = state
        .store
        .station_certificates_page(charger.id, PER_PAGE, page_offset(page))
        .await?;
    let data = rows.into_iter().map(StationCertificateBody::from).collect();
    let path = format!("/api/v3/chargers/{charger_uuid}/certificates");
    Ok(Json(Page::new(&path, page, total, data)))
}
