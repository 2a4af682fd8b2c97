//! Chargers > Reservations (block H, OCPP 1.6 and 2.0.1): a reservation made here is sent to the
//! charger as ReserveNow (an action in its audit log) and shown with how the station answered
//! and how it ended; deleting one sends CancelReservation. Scopes and access as the charger's
//! actions: reading needs `chargers:read` and the charger's sensitive data (id tags), making or
//! cancelling `chargers:write` and full access.

use crate::control::actions::charger_version;
use crate::control::reservations::{answered_status, cancel, follow_answer, reserve_now};
use crate::http::AppState;
use crate::http::actions::wait_of;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{
    charger_access, charger_access_with_sensitive_data, forbidden_unless, not_found, path_number,
};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{Data, ErrorBody, ValidationErrorBody};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use chrono::{DateTime, SecondsFormat, Utc};
use cms_bus::RequestedBy;
use cms_http_server::AnswerBy;
use cms_ocpp::OcppVersion;
use cms_store::format_record_time;
use cms_store::reservations::{NewReservation, Reservation};
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, delete))
}

/// How far ahead a reservation may end (docs/decisions.md).
const LONGEST: chrono::Duration = chrono::Duration::hours(24);

/// A reservation of a charger.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReservationBody {
    /// The OCPP reservationId sent to the charger.
    pub id: i64,
    /// The 1.6 connector or the 2.0.1 EVSE it holds; 0: any.
    pub connector_id: i64,
    pub id_tag: String,
    #[schema(required = true)]
    pub parent_id_tag: Option<String>,
    pub expires_at: String,
    /// `pending` (sent, not answered yet), `active`, `refused`, `used`, `cancelled`, `expired`
    /// or `removed`.
    #[schema(example = "active")]
    pub status: String,
    /// The station's answer to ReserveNow (`Accepted`, `Occupied`, `Faulted`, `Unavailable`,
    /// `Rejected`), or how the action ended without one (`failed`, `timed_out`, `expired`).
    #[schema(required = true)]
    pub station_status: Option<String>,
    /// The ReserveNow action in the charger's audit log.
    #[schema(required = true, format = "uuid")]
    pub action_uuid: Option<String>,
    #[schema(required = true)]
    pub ended_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<Reservation> for ReservationBody {
    fn from(r: Reservation) -> Self {
        ReservationBody {
            id: r.id,
            connector_id: r.connector_id,
            id_tag: r.id_tag,
            parent_id_tag: r.parent_id_tag,
            expires_at: r.expires_at,
            status: r.status,
            station_status: r.station_status,
            action_uuid: r.action_uuid,
            ended_at: r.ended_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// The body of a new reservation.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewReservationBody {
    /// The 1.6 connector, or the 2.0.1 EVSE; 0: any (a 1.6 charger may refuse it, per its
    /// `ReserveConnectorZeroSupported`).
    #[schema(minimum = 0, maximum = 2147483647)]
    connector_id: i64,
    /// Who it is for: at most 20 characters for a 1.6 charger, 36 for a 2.0.1 station.
    #[schema(min_length = 1, max_length = 36)]
    id_tag: String,
    /// In the future, and at most 24 hours ahead (RFC 3339).
    #[schema(format = "date-time")]
    expires_at: String,
    /// The id tag's parent (1.6 `parentIdTag`, 2.0.1 `groupIdToken`).
    #[schema(max_length = 36)]
    parent_id_tag: Option<String>,
}

/// The charger's reservations, newest first, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/reservations",
    tag = "Chargers > Reservations",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of reservations", body = Page<ReservationBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<ReservationBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    // Id tags are sensitive data, as in the audit log.
    let charger = charger_access_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let (rows, total) = (state.store)
        .reservations_page(charger.id, PER_PAGE, page_offset(page))
        .await?;
    let data = rows.into_iter().map(ReservationBody::from).collect();
    let path = format!("/api/v3/chargers/{charger_uuid}/reservations");
    Ok(Json(Page::new(&path, page, total, data)))
}

/// One reservation of the charger.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/reservations/{reservation_id}",
    tag = "Chargers > Reservations",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("reservation_id" = i64, Path, description = "The reservation's id"),
    ),
    responses(
        (status = 200, description = "The reservation", body = Data<ReservationBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not a reservation of the charger"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, id)): Path<(String, String)>,
) -> Result<Json<Data<ReservationBody>>, ApiError> {
    caller.authorize()?;
    let charger = charger_access_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let id: i64 = path_number(&id, "Reservation")?;
    let row = state.store.reservation(charger.id, id).await?;
    let row = row.ok_or_else(|| not_found("Reservation"))?;
    Ok(Json(Data::new(row.into())))
}

/// Reserve a connector (1.6) or EVSE (2.0.1) of the charger for an id tag: sends ReserveNow
/// and waits up to `wait` seconds for the station's answer.
#[utoipa::path(
    post,
    path = "/api/v3/chargers/{charger_uuid}/reservations",
    tag = "Chargers > Reservations",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 60,
            description = "Seconds to wait for the station's answer (default 30)"),
    ),
    request_body = NewReservationBody,
    responses(
        (status = 201, description = "The station answered: `active` (Accepted) or `refused` (`station_status` says why)", body = Data<ReservationBody>),
        (status = 202, description = "Sent, not answered within `wait`: `pending`; poll `Location`", body = Data<ReservationBody>,
            headers(("Location" = String))),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
        (status = 409, body = ErrorBody, description = "The charger is not connected: nothing was sent"),
        (status = 422, body = ValidationErrorBody, description = "`wait` or a field of the body is invalid: keyed by the field (`expires_at` must be in the future and at most 24 hours ahead; `id_tag` at most 20 characters for a 1.6 charger, 36 for a 2.0.1 station)"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    answer_by: Option<Extension<AnswerBy>>,
    input: Input,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let charger = charger_access(&state, &caller, &charger_uuid).await?;
    forbidden_unless(charger.permissions.full)?;
    let wait = wait_of(query)?;
    let version = charger_version(
        state
            .store
            .charger_ocpp_version(charger.id)
            .await?
            .as_deref(),
    );
    let (new, expiry) = read_new(input, version)?;
    let reservation = state.store.add_reservation(charger.id, &new).await?;
    let id = reservation.id;
    let (action, request) = reserve_now(version, &reservation, &expiry);
    let requested_by = RequestedBy {
        kind: "user".into(),
        email: caller.email(),
    };
    let taken = (state.dispatch)
        .take_live(charger.id, &charger.identity, action, request, requested_by)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let Some((taken, ended)) = taken else {
        state.store.forget_reservation(id).await?;
        return Err(ApiError::Conflict("The charger is not connected.".into()));
    };
    state.store.reservation_sent(id, &taken.uuid).await?;
    // Followed to its end whether or not this request waits that long.
    let times = state.dispatch.times;
    let follow_until = tokio::time::Instant::now() + times.ttl + times.timeout * 2;
    let (answered, was_answered) = tokio::sync::oneshot::channel();
    let dispatch = state.dispatch.clone();
    tokio::spawn(async move {
        follow_answer(dispatch, id, taken.uuid, ended, follow_until).await;
        let _ = answered.send(());
    });
    if !wait.is_zero() {
        let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
        let _ = tokio::time::timeout_at(deadline, was_answered).await;
    }
    let row = state.store.reservation(charger.id, id).await?;
    let row = row.ok_or_else(|| ApiError::Internal("a reservation made was not kept".into()))?;
    let pending = row.status == "pending";
    let body = Json(Data::new(ReservationBody::from(row)));
    if pending {
        let location = format!("/api/v3/chargers/{charger_uuid}/reservations/{id}");
        return Ok((StatusCode::ACCEPTED, [(LOCATION, location)], body).into_response());
    }
    Ok((StatusCode::CREATED, body).into_response())
}

/// Cancel a reservation in force: sends CancelReservation and waits up to `wait` seconds; the
/// reservation is `cancelled` once the station accepted.
#[utoipa::path(
    delete,
    path = "/api/v3/chargers/{charger_uuid}/reservations/{reservation_id}",
    tag = "Chargers > Reservations",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("reservation_id" = i64, Path, description = "The reservation's id"),
        ("wait" = Option<i64>, Query, minimum = 1, maximum = 60,
            description = "Seconds to wait for the station's answer (default 30)"),
    ),
    responses(
        (status = 200, description = "Cancelled", body = Data<ReservationBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not a reservation of the charger"),
        (status = 409, body = ErrorBody, description = "The reservation has ended already, the charger is not connected, or the station did not accept the cancellation (it stands)"),
        (status = 422, body = ValidationErrorBody, description = "`wait` is invalid"),
        (status = 504, body = ErrorBody, description = "No answer within `wait`: the cancellation goes on (see the charger's actions)"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    answer_by: Option<Extension<AnswerBy>>,
) -> Result<Json<Data<ReservationBody>>, ApiError> {
    caller.authorize()?;
    let charger = charger_access(&state, &caller, &charger_uuid).await?;
    let id: i64 = path_number(&id, "Reservation")?;
    let row = state.store.reservation(charger.id, id).await?;
    let row = row.ok_or_else(|| not_found("Reservation"))?;
    forbidden_unless(charger.permissions.full)?;
    let mut wait = wait_of(query)?;
    if wait.is_zero() {
        wait = std::time::Duration::from_secs(crate::http::actions::DEFAULT_WAIT);
    }
    if !matches!(row.status.as_str(), "pending" | "active") {
        let status = row.status;
        return Err(ApiError::Conflict(format!(
            "The reservation is {status} already."
        )));
    }
    let version = charger_version(
        state
            .store
            .charger_ocpp_version(charger.id)
            .await?
            .as_deref(),
    );
    let (action, request) = cancel(version, id);
    let requested_by = RequestedBy {
        kind: "user".into(),
        email: caller.email(),
    };
    let taken = (state.dispatch)
        .take_live(charger.id, &charger.identity, action, request, requested_by)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let Some((taken, ended)) = taken else {
        return Err(ApiError::Conflict("The charger is not connected.".into()));
    };
    let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
    let Some(report) = state.dispatch.end_of(&taken.uuid, ended, deadline).await? else {
        return Err(ApiError::GatewayTimeout(
            "The charger did not answer in time; the cancellation goes on.".into(),
        ));
    };
    match answered_status(&report) {
        Ok(status) if status == "Accepted" => {
            state
                .store
                .end_reservation(charger.id, id, "cancelled")
                .await?;
        }
        Ok(status) => {
            return Err(ApiError::Conflict(format!(
                "The station answered {status}: the reservation stands."
            )));
        }
        Err(ended) => {
            return Err(ApiError::Conflict(format!(
                "The cancellation ended {ended}: the reservation stands."
            )));
        }
    }
    let row = state.store.reservation(charger.id, id).await?;
    let row = row.ok_or_else(|| not_found("Reservation"))?;
    Ok(Json(Data::new(row.into())))
}

/// The body's reservation, and its expiry as OCPP writes it; 422 keyed by field otherwise.
fn read_new(mut input: Input, version: OcppVersion) -> Result<(NewReservation, String), ApiError> {
    // 1.6's IdToken is 20 characters at most; 2.0.1's 36.
    let tag_max = if version == OcppVersion::V16 {
        20.0
    } else {
        36.0
    };
    let connector_id = input.integer("connector_id", Rules::required().between(0.0, 2147483647.0));
    let id_tag = input.string("id_tag", Rules::required().between(1.0, tag_max));
    let parent = input.string(
        "parent_id_tag",
        Rules::optional().nullable().between(1.0, tag_max),
    );
    let expires_at = input.required_string("expires_at", 64.0);
    let expires_at = expires_at.and_then(|text| match expiry_of(&text) {
        Ok(at) => Some(at),
        Err(why) => {
            input.fail("expires_at", why);
            None
        }
    });
    input.finish()?;
    let (Some(Some(connector_id)), Some(Some(id_tag)), Some(expires_at)) =
        (connector_id, id_tag, expires_at)
    else {
        return Err(ApiError::Internal(
            "validation passed without a field".into(),
        ));
    };
    let new = NewReservation {
        connector_id,
        id_tag,
        parent_id_tag: parent.flatten(),
        expires_at: format_record_time(expires_at),
    };
    Ok((new, expires_at.to_rfc3339_opts(SecondsFormat::Secs, true)))
}

/// An expiry in the future and at most [`LONGEST`] ahead, to the second.
fn expiry_of(text: &str) -> Result<DateTime<Utc>, &'static str> {
    let at = DateTime::parse_from_rfc3339(text)
        .map_err(|_| "The expires at field must be a date-time (RFC 3339).")?
        .with_timezone(&Utc);
    let at = at - chrono::Duration::nanoseconds(at.timestamp_subsec_nanos().into());
    let now = Utc::now();
    if at <= now {
        return Err("The expires at field must be a date-time after now.");
    }
    if at > now + LONGEST {
        return Err("The expires at field must be at most 24 hours from now.");
    }
    Ok(at)
}
