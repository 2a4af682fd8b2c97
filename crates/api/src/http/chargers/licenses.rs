//! Chargers > Licenses (the reference shows the group, not its behaviour; docs/api.md
//! "Licences"): which paid features a charger has. Everyone who sees a charger reads its
//! `licenses`; only the platform operator changes them.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::visible_charger;
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::Charger;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(set_licenses))
}

/// The body of `PUT .../licenses`: each licence given is granted (true) or withdrawn (false).
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct LicensesChange {
    /// Site load management: without it the charger is left out of its site's smart
    /// charging and charges at its own limit.
    smart: Option<bool>,
    /// Proxy relaying and prices shown on the charger.
    pro: Option<bool>,
}

/// A 403 that names the licence a feature needs.
pub fn unlicensed(license: &str) -> ApiError {
    ApiError::ForbiddenBecause(format!(
        "The charger has no {license} license; the platform operator grants it."
    ))
}

/// Grant or withdraw a charger's licences: the platform operator's (a token with
/// licenses:write of a member of the operators' team).
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/licenses",
    tag = "Chargers > Licenses",
    params(("charger_uuid" = String, Path, format = "uuid")),
    request_body = LicensesChange,
    responses(
        (status = 200, description = "The charger with its licences", body = Data<Charger>),
        (status = 403, body = ErrorBody, description = "The token lacks licenses:write, or its user is not of the platform operators' team"),
    ),
    security(("bearer" = ["licenses:write"]), ("oauth2" = ["licenses:write"]))
)]
pub async fn set_licenses(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<Data<Charger>>, ApiError> {
    caller.authorize()?;
    if !state.store.is_platform_operator(caller.user_id()).await? {
        return Err(ApiError::ForbiddenBecause(
            "Only the platform operators' team grants licenses.".into(),
        ));
    }
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let smart = input.boolean("smart", Rules::optional()).flatten();
    let pro = input.boolean("pro", Rules::optional()).flatten();
    input.finish()?;
    state
        .store
        .set_charger_licenses(charger.id, smart, pro)
        .await?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    Ok(Json(Data::new(charger.into())))
}
