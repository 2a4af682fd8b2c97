//! How a charger proves who it is (beyond the reference): its OCPP security profile and, for
//! profiles 1 and 2, its Basic-auth password. Set when the charger is registered; changed here,
//! for instance to move a fleet from profile 1 to 2 once it has its TLS certificates.
//!
//! A connected charger that keeps Basic auth gets its new password through cms: a
//! ChangeConfiguration of its `AuthorizationKey` (the password hex-encoded, as the OCPP 1.6
//! security whitepaper has it), and cms takes the new password only once the charger accepts
//! it; the old one works until then.

use super::{Charger, only_operators_open, read_credentials};
use crate::control::actions::Target;
use crate::http::AppState;
use crate::http::actions::wait_of;
use crate::http::auth::Caller;
use crate::http::chargers::Credentials;
use crate::http::error::ApiError;
use crate::http::input::Input;
use crate::http::lookup::{forbidden_unless, visible_charger};
use crate::http::schema::ErrorBody;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use cms_bus::RequestedBy;
use cms_http_server::AnswerBy;
use cms_ocpp::v16::Command;
use cms_ocpp::v16::secrets::AUTHORIZATION_KEY;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(set_security))
}

/// The password a charger is sent as its AuthorizationKey: the whitepaper's 16 to 20 bytes
/// (40 hexadecimal digits at most), so a generated one is 20 characters (about 119 bits).
const SENT_PASSWORD_MAX: usize = 20;

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
    /// without `:`; 16 to 20 when it is sent to a connected charger); generated and returned
    /// once when absent. The old one stops working.
    #[schema(min_length = 16, max_length = 40, pattern = r"^[!-9;-~]{16,40}$")]
    password: Option<String>,
}

/// The charger after the change.
#[derive(Serialize, ToSchema)]
pub struct SecurityAnswer {
    data: Charger,
    /// The Basic-auth password cms generated (user: the identity), when none was given and
    /// the charger takes one. Not shown again. Sent to a connected charger, it is in effect
    /// only once `rotation.status` is `Accepted` or `RebootRequired`.
    #[serde(skip_serializing_if = "Option::is_none")]
    password: Option<String>,
    /// How sending the password to the connected charger went; absent when it was not sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    rotation: Option<RotationBody>,
}

/// The ChangeConfiguration of the charger's AuthorizationKey that carries its new password.
#[derive(Serialize, ToSchema)]
pub struct RotationBody {
    /// The action's uuid (Chargers > Actions; its request shows the value as `***`).
    action: String,
    /// The charger's answer (`Accepted` or `RebootRequired`: the new password is the one from
    /// then on; `Rejected`, `NotSupported`: the old one stays), or the action's status when it
    /// did not end `answered` (`pending` and `sent` while it goes on; then the old one stays).
    status: String,
}

/// Change a charger's security profile and credentials. A connected charger with Basic auth
/// (profile 1 or 2, before and after) is sent its new password as its AuthorizationKey, and
/// cms takes it once the charger accepts (the old one works until then); any other change
/// applies from the charger's next connection (within about a second).
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/security",
    tag = "Chargers",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 60,
            description = "Seconds to wait for a connected charger's answer (default 30)"),
    ),
    request_body = SecurityChange,
    responses(
        (status = 200, description = "The change was made, or the charger answered", body = SecurityAnswer),
        (status = 202, description = "The password was sent to the charger, which has not answered yet", body = SecurityAnswer),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn set_security(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    answer_by: Option<Extension<AnswerBy>>,
    mut input: Input,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    forbidden_unless(charger.permissions.full)?;
    let wait = wait_of(query)?;
    let credentials = read_credentials(&mut input);
    only_operators_open(&state, &caller, &mut input, &credentials).await?;
    let basic_auth = |profile: i64| matches!(profile, 1 | 2);
    let sent = match (&credentials, &charger.live_session) {
        (Some(new), Some(_))
            if basic_auth(charger.security_profile) && basic_auth(new.security_profile) =>
        {
            password_to_send(&mut input, new, state.dispatch.can_seal())
        }
        _ => None,
    };
    input.finish()?;
    let Some(credentials) = credentials else {
        return Err(ApiError::Internal(
            "validation passed without credentials".into(),
        ));
    };
    let (Some(password), Some(session)) = (sent, &charger.live_session) else {
        state
            .store
            .set_charger_security(
                charger.id,
                credentials.security_profile,
                credentials.password_hash.as_deref(),
            )
            .await?;
        let charger = visible_charger(&state, &caller, &charger_uuid).await?;
        let answer = SecurityAnswer {
            data: charger.into(),
            password: credentials.generated_password,
            rotation: None,
        };
        return Ok(Json(answer).into_response());
    };
    // The change waits for the action that carries the password, kept before it is taken.
    let uuid = uuid::Uuid::new_v4().to_string();
    let hash = cms_credentials::hash_secret(&password);
    (state.store)
        .insert_credential_change(&uuid, charger.id, credentials.security_profile, &hash)
        .await?;
    let hex: String = password.bytes().map(|b| format!("{b:02X}")).collect();
    let request = json!({"key": AUTHORIZATION_KEY, "value": hex});
    let target = Target {
        charger_id: charger.id,
        identity: &charger.identity,
        session,
    };
    let requested_by = RequestedBy {
        kind: "user".into(),
        email: caller.email(),
    };
    let (uuid, ended) = state
        .dispatch
        .take_as(
            uuid,
            &target,
            Command::ChangeConfiguration.into(),
            request,
            requested_by,
        )
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
    state.dispatch.wait_for_end(&uuid, ended, deadline).await?;
    let row = state.store.action(charger.id, &uuid).await?;
    let (status, answer) = row.map_or(("pending".to_string(), None), |r| (r.status, r.response));
    let going_on = matches!(status.as_str(), "pending" | "sent");
    let answered = answer
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["status"].as_str().map(str::to_string));
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let answer = SecurityAnswer {
        data: charger.into(),
        password: credentials.given_password.is_none().then_some(password),
        rotation: Some(RotationBody {
            action: uuid,
            status: answered.unwrap_or(status),
        }),
    };
    let code = if going_on {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((code, Json(answer)).into_response())
}

/// The password to send a connected charger as its AuthorizationKey: the one given (at most
/// 20 characters, the whitepaper's bound), or a new one; `None` when it cannot be sent (the
/// failure is on `input`).
fn password_to_send(input: &mut Input, new: &Credentials, can_seal: bool) -> Option<String> {
    if !can_seal {
        input.fail(
            "password",
            "The charger is connected, and its new password goes to it as its AuthorizationKey: \
             this API has no --secrets-key to send it sealed.",
        );
        return None;
    }
    match &new.given_password {
        Some(given) if given.chars().count() > SENT_PASSWORD_MAX => {
            input.fail(
                "password",
                format!(
                    "The password field must not be greater than {SENT_PASSWORD_MAX} characters \
                     for a connected charger: it is sent as its AuthorizationKey (16 to 20 bytes \
                     in the OCPP 1.6 security whitepaper)."
                ),
            );
            None
        }
        Some(given) => Some(given.clone()),
        None => Some(cms_credentials::random_token(SENT_PASSWORD_MAX)),
    }
}
