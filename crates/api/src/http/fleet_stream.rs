//! The chargers stream (docs/api.md "Fleet overview"): `GET /api/v3/chargers/stream`, Server-Sent
//! Events of the caller's chargers whose connection or statuses changed, one `chargers` event a
//! second at most (crate::ingest::fleet coalesces the changes per charger), for a client that
//! loaded a page of the list and applies them. Bounded, checked and ended like the meter-value
//! streams (crate::http::streams): a stream slot each, the token and the caller's chargers
//! checked every second, ended at its maximum life, `retry:` given.

use crate::http::AppState;
use crate::http::auth::{Caller, bearer};
use crate::http::error::ApiError;
use crate::http::schema::ErrorBody;
use crate::http::stream_slots::Slot;
use crate::http::streams::{RECHECK, RECONNECT_AFTER, REREAD_EVERY, dropped, life};
use crate::ingest::fleet::FleetCharger;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(chargers_stream))
}

/// Events a client may leave unread before it is dropped: each is a second's changes.
const QUEUED: usize = 16;

/// A charger as a `chargers` event tells it.
#[derive(Serialize, ToSchema)]
pub struct ChangedCharger {
    #[schema(format = "uuid")]
    uuid: String,
    identity: String,
    online: bool,
    /// The charger's own status (connector 0).
    #[schema(required = true)]
    status: Option<String>,
    connectors: Vec<ConnectorStatus>,
    /// When cms last received a message from it.
    #[schema(required = true)]
    last_message_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct ConnectorStatus {
    connector_id: i64,
    status: String,
}

impl From<&FleetCharger> for ChangedCharger {
    fn from(c: &FleetCharger) -> Self {
        let row = &c.row;
        ChangedCharger {
            uuid: row.uuid.clone(),
            identity: row.identity.clone(),
            online: row.online,
            status: row.status.clone(),
            connectors: row
                .connectors
                .iter()
                .map(|(connector_id, status)| ConnectorStatus {
                    connector_id: *connector_id,
                    status: status.clone(),
                })
                .collect(),
            last_message_at: row.last_message_at.clone(),
        }
    }
}

/// The stream of the caller's chargers that change.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/stream",
    tag = "Chargers",
    responses(
        (status = 200, description = "`text/event-stream` of `chargers` events, at most one a second: `data` a JSON array of the caller's chargers whose connection or statuses changed, as `ChangedCharger`", content_type = "text/event-stream", body = Vec<ChangedCharger>),
        (status = 429, body = ErrorBody, description = "The caller's user holds `--stream-max-per-user` streams already (`Retry-After`)"),
        (status = 503, body = ErrorBody, description = "The server holds `--stream-max-total` streams already (`Retry-After`)"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn chargers_stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let slot = match state.streams.take(caller.user_id()) {
        Ok(slot) => slot,
        Err(refused) => return Ok(refused.into_response()),
    };
    let visible = visible(&state, &caller).await?;
    let (queue, events) = tokio::sync::mpsc::channel(QUEUED);
    let following = Following {
        flushes: state.fleet.follow(),
        ends_at: Instant::now() + life(state.streams.limits().max_life),
        bearer: bearer(&headers).unwrap_or_default().to_string(),
        state,
        caller,
        visible,
    };
    tokio::spawn(forward(following, queue));
    let reconnect = Event::default().retry(RECONNECT_AFTER);
    let first = futures_util::stream::iter([Ok::<_, Infallible>(reconnect)]);
    // The slot is held by the response, given back when it ends.
    let live =
        futures_util::stream::unfold((events, slot), |(mut events, slot): (_, Slot)| async move {
            let e = events.recv().await?;
            Some((Ok::<_, Infallible>(e), (events, slot)))
        });
    use futures_util::StreamExt;
    Ok(Sse::new(first.chain(live))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The ids of the chargers the caller sees now.
async fn visible(state: &AppState, caller: &Caller) -> Result<HashSet<i64>, ApiError> {
    let visible = state
        .access
        .visible_chargers(&state.store, caller.user_id())
        .await?;
    Ok(visible.chargers.iter().map(|c| c.id).collect())
}

struct Following {
    state: AppState,
    caller: Caller,
    bearer: String,
    visible: HashSet<i64>,
    flushes: tokio::sync::broadcast::Receiver<Arc<Vec<i64>>>,
    ends_at: Instant,
}

async fn forward(mut f: Following, queue: tokio::sync::mpsc::Sender<Event>) {
    let mut next_check = Instant::now() + RECHECK;
    let mut checks: u32 = 0;
    loop {
        tokio::select! {
            flushed = f.flushes.recv() => match flushed {
                Ok(ids) => {
                    let Some(e) = event(&f, &ids) else { continue };
                    match queue.try_send(e) {
                        Ok(()) => {}
                        Err(TrySendError::Full(_)) => return dropped("slow"),
                        Err(TrySendError::Closed(_)) => return,
                    }
                }
                Err(RecvError::Lagged(_)) => return dropped("slow"),
                Err(RecvError::Closed) => return,
            },
            _ = queue.closed() => return,
            _ = f.state.closing.cancelled() => return,
            _ = tokio::time::sleep_until(f.ends_at) => {
                metrics::counter!("cms_api_stream_dropped_total", "reason" => "max_life")
                    .increment(1);
                return;
            }
            _ = tokio::time::sleep_until(next_check) => {
                if !still_allowed(&f).await {
                    return dropped("access");
                }
                checks += 1;
                if checks.is_multiple_of(REREAD_EVERY) {
                    match visible(&f.state, &f.caller).await {
                        Ok(visible) => f.visible = visible,
                        Err(_) => return dropped("access"),
                    }
                }
                next_check = Instant::now() + RECHECK;
            }
        }
    }
}

/// Whether the stream's token is still valid, with its scope (from memory).
async fn still_allowed(f: &Following) -> bool {
    let owner = f.state.access.authenticate(&f.state.store, &f.bearer).await;
    let Ok(Some(owner)) = owner else {
        return false;
    };
    Caller(owner, f.caller.1).authorize().is_ok()
}

/// A `chargers` event of the flushed chargers the caller sees, as they are now; none when it
/// sees none of them.
fn event(f: &Following, ids: &[i64]) -> Option<Event> {
    let changed: Vec<ChangedCharger> = ids
        .iter()
        .filter(|id| f.visible.contains(id))
        .filter_map(|id| {
            f.state
                .fleet
                .with(*id, |held| held.map(ChangedCharger::from))
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    let data = serde_json::to_string(&changed).ok()?;
    Some(Event::default().event("chargers").data(data))
}
