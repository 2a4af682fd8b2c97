//! How a charger proves who it is (beyond the reference): its OCPP security profile and, for
//! profiles 1 and 2, its Basic-auth password. Set when the charger is registered; changed here,
//! for instance to move a fleet from profile 1 to 2 once it has its TLS certificates.

use super::{NewChargerAnswer, only_operators_open, read_credentials};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::Input;
use crate::http::lookup::{forbidden_unless, visible_charger};
use crate::http::schema::{ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_store::Scope;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(set_security))
}

/// The body of `PUT .../security`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct SecurityChange {
    /// OCPP security profile: 1 (Basic auth, the default), 2 (Basic auth over wss only), 3 (a
    /// client certificate over wss, subject CN = identity; no `password`), or 0 (no
    /// credentials; the platform operators' test benches only).
    #[schema(minimum = 0, maximum = 3)]
    security_profile: Option<i64>,
    /// The new Basic-auth password for profiles 1 and 2 (16 to 40 printable ASCII characters
    /// without `:`); generated and returned once when absent. The old one stops working.
    #[schema(min_length = 16, max_length = 40, pattern = r"^[!-9;-~]{16,40}$")]
    password: Option<String>,
}

/// Change a charger's security profile and credentials. The gateways apply them from the
/// charger's next connection (within about a second); a charger connected now keeps its
/// session until it reconnects, so send it a Reset to make the change at once.
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/security",
    tag = "Chargers",
    params(("charger_uuid" = String, Path, format = "uuid")),
    request_body = SecurityChange,
    responses(
        (status = 200, description = "The charger, with its generated password shown this once", body = NewChargerAnswer),
        (status = 400, body = ErrorBody, description = "The body is not a JSON object"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
        (status = 422, body = ValidationErrorBody),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn set_security(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<NewChargerAnswer>, ApiError> {
    caller.require(Scope::CHARGERS_WRITE)?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    forbidden_unless(charger.permissions.full)?;
    let credentials = read_credentials(&mut input);
    only_operators_open(&state, &caller, &mut input, &credentials).await?;
    input.finish()?;
    let Some(credentials) = credentials else {
        return Err(ApiError::Internal(
            "validation passed without credentials".into(),
        ));
    };
    state
        .store
        .set_charger_security(
            charger.id,
            credentials.security_profile,
            credentials.password_hash.as_deref(),
        )
        .await?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    Ok(Json(NewChargerAnswer {
        data: charger.into(),
        password: credentials.generated_password,
    }))
}
