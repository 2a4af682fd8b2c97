//! A webhook's delivery log (docs/events.md): each event sent to it, with every attempt (time,
//! status, latency, error), newest first; and redelivering one (the same body and event id,
//! due at once). As a team's webhooks: any member, with the teams scopes; another team's
//! webhook is 404.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::not_found;
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::Data;
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::now_record_time;
use cms_store::webhooks::deliveries::{Attempt, DeliveryRecord};
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(redeliver))
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptBody {
    pub attempted_at: String,
    /// The receiver's status; null when it gave none (timed out, refused, unreachable).
    #[schema(required = true)]
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    /// What went wrong, or the start (at most 4 KiB) of the receiver's answer to a failure.
    #[schema(required = true)]
    pub error: Option<String>,
}

/// One event sent to a webhook.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    /// The event's id: the `webhook-id` header, the same on every attempt.
    #[schema(example = "evt_2b0a6c0f3c8e4f9a8f1d2c3b4a596877")]
    pub event_id: String,
    #[schema(example = "charger.connected")]
    pub event_type: String,
    /// `pending`, `delivered` or `failed` (every retry spent).
    #[schema(example = "delivered")]
    pub state: String,
    pub attempts: i64,
    /// When it is tried next; null unless pending.
    #[schema(required = true)]
    pub next_attempt_at: Option<String>,
    #[schema(required = true)]
    pub last_status: Option<i64>,
    #[schema(required = true)]
    pub last_error: Option<String>,
    #[schema(required = true)]
    pub delivered_at: Option<String>,
    pub created_at: String,
    /// Its attempts, oldest first.
    pub attempt_log: Vec<AttemptBody>,
}

impl From<Attempt> for AttemptBody {
    fn from(a: Attempt) -> Self {
        AttemptBody {
            attempted_at: a.attempted_at,
            status_code: a.status_code,
            latency_ms: a.latency_ms,
            error: a.error,
        }
    }
}

impl From<DeliveryRecord> for DeliveryBody {
    fn from(d: DeliveryRecord) -> Self {
        DeliveryBody {
            uuid: d.uuid,
            event_id: d.event_id,
            event_type: d.event_type,
            state: d.state,
            attempts: d.attempts,
            next_attempt_at: d.next_attempt_at,
            last_status: d.last_status,
            last_error: d.last_error,
            delivered_at: d.delivered_at,
            created_at: d.created_at,
            attempt_log: d.attempt_log.into_iter().map(AttemptBody::from).collect(),
        }
    }
}

/// A delivery put back to pending.
#[derive(Debug, Serialize, ToSchema)]
pub struct RedeliveryBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    #[schema(example = "pending")]
    pub state: String,
    pub next_attempt_at: String,
}

/// The webhook's deliveries, newest first, 25 a page, each with its attempts.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}/deliveries",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the webhook's deliveries", body = Page<DeliveryBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<DeliveryBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let (rows, total) = state
        .store
        .webhook_deliveries(team.id, &webhook_uuid, PER_PAGE, page_offset(page))
        .await?
        .ok_or_else(|| not_found("Webhook"))?;
    let path = format!(
        "/api/v3/teams/{}/webhooks/{webhook_uuid}/deliveries",
        team.uuid
    );
    let data = rows.into_iter().map(DeliveryBody::from).collect();
    Ok(Json(Page::new(&path, page, total, data)))
}

/// Sends a delivery again: back to pending, due at once, with the same body and event id (a
/// delivered or failed one too). A failed one gets one more attempt.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}/deliveries/{delivery_uuid}/redeliver",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
        ("delivery_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 202, description = "Due again at once", body = Data<RedeliveryBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid, delivery_uuid)): Path<(String, String, String)>,
) -> Result<(StatusCode, Json<Data<RedeliveryBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let now = now_record_time();
    let found = state
        .store
        .redeliver_webhook_delivery(team.id, &webhook_uuid, &delivery_uuid, &now)
        .await?;
    if !found {
        return Err(not_found("Delivery"));
    }
    let body = RedeliveryBody {
        uuid: delivery_uuid,
        state: "pending".into(),
        next_attempt_at: now,
    };
    Ok((StatusCode::ACCEPTED, Json(Data::new(body))))
}
