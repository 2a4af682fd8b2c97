//! A team's webhooks (docs/api.md "Webhooks", docs/events.md): where cms sends the events the
//! team asks for, signed with a secret shown once (on creation and on rotation). As a team's
//! other resources: any member reads them with `teams:read`, changes them with `teams:write`;
//! another team's webhook is not found.

mod target;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::not_found;
use crate::http::pagination::Page;
use crate::http::schema::{Data, EmptyBody};
use crate::http::team_owned::{owned, page_of};
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::webhooks::EVENT_TYPES;
use cms_store::webhooks::subscriptions::{Creation, WEBHOOKS_PER_TEAM, Webhook, WebhookFields};
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, replace, destroy))
        .routes(routes!(rotate_secret))
}

/// A webhook of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    #[schema(example = "https://example.com/cms-events")]
    pub url: String,
    #[schema(required = true)]
    pub description: Option<String>,
    /// The event types it is sent (docs/events.md).
    #[schema(example = json!(["charger.connected", "transaction.ended"]))]
    pub event_types: Vec<String>,
    pub enabled: bool,
    /// Since when its deliveries fail for good (the last retry of one gave up); null once one
    /// succeeds.
    #[schema(required = true)]
    pub failing_since: Option<String>,
    /// Why cms disabled it: `gone` (the receiver answered 410). Null when it did not; enabling
    /// it again clears it.
    #[schema(required = true)]
    pub disabled_reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// The signing secret (`whsec_...`, Standard Webhooks): only in the answers of its creation
    /// and of `rotate-secret`, shown that once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl WebhookBody {
    fn of(w: Webhook, with_secret: bool) -> Self {
        WebhookBody {
            uuid: w.uuid,
            url: w.url,
            description: w.description,
            event_types: w.event_types,
            enabled: w.enabled,
            failing_since: w.failing_since,
            disabled_reason: w.disabled_reason,
            created_at: w.created_at,
            updated_at: w.updated_at,
            secret: with_secret.then_some(w.secret),
        }
    }
}

/// The body of a webhook's create and replace.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct WebhookRequest {
    /// An absolute https URL (http only with `--webhook-allow-private`), without user name or
    /// password, whose host is not a loopback, private, link-local or metadata address.
    #[schema(max_length = 2048)]
    url: String,
    /// At least one of the event types (docs/events.md), each once.
    #[schema(min_items = 1)]
    event_types: Vec<String>,
    #[schema(max_length = 255)]
    description: Option<String>,
    /// Default true.
    enabled: Option<bool>,
}

/// The fields of a create or a replace: 422 with every failing field.
async fn read(state: &AppState, mut input: Input) -> Result<WebhookFields, ApiError> {
    let url = input.required_string("url", target::MAX_URL as f64);
    if let Some(url) = &url
        && let Err(message) = target::check(url, state.webhook_allow_private).await
    {
        input.fail("url", message);
    }
    let event_types = event_types(&mut input);
    // Optional: `None` when absent (an invalid one fails `finish`).
    let description = input.string("description", Rules::optional().nullable().max(255.0));
    let enabled = input.boolean("enabled", Rules::optional());
    let fields = (|| {
        Some(WebhookFields {
            url: url?,
            event_types: event_types?,
            description: description.flatten(),
            enabled: enabled.flatten().unwrap_or(true),
        })
    })();
    input.finish()?;
    fields.ok_or_else(|| ApiError::Internal("a valid webhook without fields".into()))
}

/// `event_types`: a non-empty array of [`EVENT_TYPES`], each once.
fn event_types(input: &mut Input) -> Option<Vec<String>> {
    let items = input.array("event_types", Rules::required()).flatten()?;
    if items.is_empty() {
        input.fail("event_types", "The event types field is required.");
        return None;
    }
    let mut types: Vec<String> = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let field = format!("event_types.{n}");
        match item.as_str() {
            Some(name) if !EVENT_TYPES.contains(&name) => {
                input.fail(&field, format!("The selected {field} is invalid."));
            }
            Some(name) if types.iter().any(|t| t == name) => {
                input.fail(&field, format!("The {field} field has a duplicate value."));
            }
            Some(name) => types.push(name.to_string()),
            None => input.fail(&field, format!("The {field} field must be a string.")),
        }
    }
    (types.len() == items.len()).then_some(types)
}

/// The team's webhooks, oldest first, 25 a page (without their secrets).
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/webhooks",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the team's webhooks", body = Page<WebhookBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<WebhookBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let path = format!("/api/v3/teams/{}/webhooks", team.uuid);
    let fetch = |limit, offset| state.store.webhooks(team.id, limit, offset);
    page_of(&query, &path, fetch, |w| Ok(WebhookBody::of(w, false))).await
}

/// Add a webhook to a team the caller belongs to: its answer holds the signing secret, shown
/// this once. A team has at most 20 webhooks (422 on `webhooks` past it).
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/webhooks",
    tag = "Webhooks",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = WebhookRequest,
    responses(
        (status = 201, description = "The new webhook, with its secret", body = Data<WebhookBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    input: Input,
) -> Result<(StatusCode, Json<Data<WebhookBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let fields = read(&state, input).await?;
    match state.store.create_webhook(team.id, &fields).await? {
        Creation::Created(webhook) => Ok((
            StatusCode::CREATED,
            Json(Data::new(WebhookBody::of(*webhook, true))),
        )),
        Creation::LimitReached => Err(ApiError::invalid(
            "webhooks",
            format!("The team has reached its limit of {WEBHOOKS_PER_TEAM} webhooks."),
        )),
    }
}

/// The team's webhook, for a member of the team.
async fn team_webhook(
    state: &AppState,
    caller: &Caller,
    team_uuid: &str,
    webhook_uuid: &str,
) -> Result<(i64, Webhook), ApiError> {
    let find = |team_id| state.store.webhook(team_id, webhook_uuid);
    let (team, webhook) = owned(state, caller, team_uuid, "Webhook", find).await?;
    Ok((team.id, webhook))
}

/// A webhook of a team the caller belongs to (without its secret).
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, body = Data<WebhookBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid)): Path<(String, String)>,
) -> Result<Json<Data<WebhookBody>>, ApiError> {
    caller.authorize()?;
    let (_, webhook) = team_webhook(&state, &caller, &team_uuid, &webhook_uuid).await?;
    Ok(Json(Data::new(WebhookBody::of(webhook, false))))
}

/// Replace a webhook's fields (its secret stays). Enabling a webhook cms disabled (its
/// receiver answered 410) clears `disabled_reason`.
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
    ),
    request_body = WebhookRequest,
    responses(
        (status = 200, body = Data<WebhookBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid)): Path<(String, String)>,
    input: Input,
) -> Result<Json<Data<WebhookBody>>, ApiError> {
    caller.authorize()?;
    let (team_id, _) = team_webhook(&state, &caller, &team_uuid, &webhook_uuid).await?;
    let fields = read(&state, input).await?;
    let webhook = state
        .store
        .replace_webhook(team_id, &webhook_uuid, &fields)
        .await?
        .ok_or_else(|| not_found("Webhook"))?;
    Ok(Json(Data::new(WebhookBody::of(webhook, false))))
}

/// Delete a webhook with its delivery log: nothing more is sent to it. Answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn destroy(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    if state.store.delete_webhook(team.id, &webhook_uuid).await? {
        Ok(Json(EmptyBody {}))
    } else {
        Err(not_found("Webhook"))
    }
}

/// Give a webhook a new signing secret, shown in this answer only. The previous secret signs
/// deliveries too for 24 hours (a second `v1,` signature), so the receiver can switch.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/webhooks/{webhook_uuid}/rotate-secret",
    tag = "Webhooks",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("webhook_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, description = "The webhook, with its new secret", body = Data<WebhookBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn rotate_secret(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, webhook_uuid)): Path<(String, String)>,
) -> Result<Json<Data<WebhookBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let webhook = state
        .store
        .rotate_webhook_secret(team.id, &webhook_uuid)
        .await?
        .ok_or_else(|| not_found("Webhook"))?;
    Ok(Json(Data::new(WebhookBody::of(webhook, true))))
}
