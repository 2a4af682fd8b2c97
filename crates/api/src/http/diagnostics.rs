//! Chargers > Diagnostics: why a charger does not connect. Its last OCPP frames both ways
//! (secrets masked) and its last connection attempts, refused ones with cms's reason, as the
//! gateway keeps them in memory (docs/operations.md, "Why a charger does not connect").
//! Readable with the charger's sensitive-data access, as its actions log is: frames carry
//! drivers' id tags.

use crate::control::diagnostics::{ChargerDiagnostics, FramesUnanswered};
use crate::control::frames_from_bus::ANSWER_WITHIN;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::charger_with_sensitive_data;
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use chrono::SecondsFormat;
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(messages))
        .routes(routes!(connection_attempts))
}

/// A frame between cms and the charger.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageBody {
    /// When the gateway read it or wrote it (RFC 3339, UTC).
    pub at: String,
    /// `in` (from the charger) or `out` (to it).
    pub direction: String,
    /// The frame's text. Secret values (a ChangeConfiguration or GetConfiguration answer's
    /// `AuthorizationKey` or other secret key, a 2.0.1 `BasicAuthPassword`) show as `***`; a
    /// frame over 4 KiB is cut, ending in `... [cut: N bytes in all]`.
    pub frame: String,
}

/// A connection of the charger, let in or turned away.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionAttemptBody {
    pub at: String,
    /// The address it came from, as the gateway saw it (`ip:port`).
    pub peer: String,
    /// `accepted` or `refused`.
    pub outcome: String,
    /// Why it was refused: `unknown_identity`, `wrong_password`, `no_password`,
    /// `tls_required`, `no_certificate`, `certificate_subject`, `no_subprotocol`, `takeover`
    /// or `capacity`; null when accepted.
    pub reason: Option<String>,
}

fn time(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Where this process reads diagnostics; none yet while `cms up` is starting.
fn source(state: &AppState) -> Result<Arc<dyn ChargerDiagnostics>, ApiError> {
    state.diagnostics.get().cloned().ok_or_else(|| {
        ApiError::NotImplemented("This process reads no charger diagnostics.".into())
    })
}

/// The charger's last OCPP frames both ways, newest first: up to 200 (`--charger-frames-kept`)
/// and `--charger-frames-bytes` (16 KiB) of them, kept by the gateway that holds it, for an
/// hour after it disconnects. `cms api` asks the gateways for them over the bus.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/messages",
    tag = "Chargers > Diagnostics",
    params(("charger_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, description = "The frames, newest first", body = Data<Vec<MessageBody>>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
        (status = 504, body = ErrorBody, description = "`cms api` of a Kafka deployment: the gateway holding the connected charger did not send its frames within 3 s"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn messages(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<Vec<MessageBody>>>, ApiError> {
    caller.authorize()?;
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let connected = charger.live_session.is_some();
    let frames = source(&state)?
        .frames(&charger.identity, connected)
        .await
        .map_err(|FramesUnanswered| {
            ApiError::GatewayTimeout(format!(
                "The gateway holding the charger did not send its frames within {} s; try again.",
                ANSWER_WITHIN.as_secs()
            ))
        })?;
    let data = frames
        .into_iter()
        .map(|frame| MessageBody {
            at: time(frame.at),
            direction: if frame.incoming { "in" } else { "out" }.into(),
            frame: frame.shown,
        })
        .collect();
    Ok(Json(Data::new(data)))
}

/// The charger's last connection attempts (up to 20), newest first, refused ones with cms's
/// reason, as the gateways saw them since they (`cms up`) or this API replica (`cms api`)
/// started.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/connection-attempts",
    tag = "Chargers > Diagnostics",
    params(("charger_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, description = "The attempts, newest first", body = Data<Vec<ConnectionAttemptBody>>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn connection_attempts(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<Vec<ConnectionAttemptBody>>>, ApiError> {
    caller.authorize()?;
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let data = source(&state)?
        .attempts(&charger.identity)
        .into_iter()
        .map(|attempt| ConnectionAttemptBody {
            at: time(attempt.at),
            peer: attempt.peer,
            outcome: match attempt.refused {
                None => "accepted",
                Some(_) => "refused",
            }
            .into(),
            reason: attempt.refused,
        })
        .collect();
    Ok(Json(Data::new(data)))
}
