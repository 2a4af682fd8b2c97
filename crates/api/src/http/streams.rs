//! Live streams of latest meter values (beyond the reference; docs/api.md "Live streams"): a
//! connector's, or every connector's of a site, as Server-Sent Events pushed when the
//! materialiser takes a newer reading. The scopes and access rules of `latest-metervalue`; a
//! stream checks every [`RECHECK`] that its caller still sees what it streams, and ends when
//! not. A client that reads slower than readings come is dropped once it falls the stream
//! buffer (`--stream-buffer`) behind (counted), never buffered without end. An
//! event's id is its change's sequence number: `Last-Event-ID` resumes, sending first each
//! current value newer than it. Streams are bounded per user and in all (crate::http::
//! stream_slots), and each ends at its maximum life for its client to reconnect and resume.

use crate::http::AppState;
use crate::http::auth::{Caller, bearer};
use crate::http::error::ApiError;
use crate::http::lookup::{
    charger_access_with_sensitive_data, forbidden_unless, path_number, visible_site,
};
use crate::http::schema::ErrorBody;
use crate::http::stream_slots::Slot;
use crate::ingest::cache::ValueChange;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(connector_stream))
        .routes(routes!(site_stream))
}

/// How often a stream checks that its token is still valid and its caller may still see what
/// it streams (from memory: crate::http::access).
pub(crate) const RECHECK: Duration = Duration::from_secs(1);
/// Every how many checks a site's stream reads its chargers again (a store query).
pub(crate) const REREAD_EVERY: u32 = 5;
/// The most chargers a site's stream follows (the store is asked for them in one page).
const SITE_CHARGERS: i64 = 10_000;
/// How soon a client reconnects after its stream ends (SSE `retry:`): at its maximum life, the
/// response simply ends, and `EventSource` would otherwise wait its own default.
pub(crate) const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// What a stream sends: chargers by identity (to their uuid), and one connector or all.
struct Watched {
    chargers: HashMap<String, String>,
    connector: Option<u32>,
}

impl Watched {
    fn covers(&self, identity: &str, connector: u32) -> Option<&str> {
        if self.connector.is_some_and(|c| c != connector) {
            return None;
        }
        self.chargers.get(identity).map(String::as_str)
    }
}

/// Whom a stream is for and what it follows, re-read at each check.
#[derive(Clone)]
enum Subject {
    Connector {
        charger_uuid: String,
        connector: u32,
    },
    Site {
        site_uuid: String,
    },
}

/// The stream of one connector's latest meter value.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}/latest-metervalue/stream",
    tag = "Chargers > Connectors",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("connector_id" = String, Path, description = "The connector's number on its charger"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event: the current value is sent first only if newer"),
    ),
    responses(
        (status = 200, description = "`text/event-stream` of `meter-value` events: `{charger_uuid, connectorId, meterValue}`, the current value first", content_type = "text/event-stream", body = String),
        (status = 403, body = ErrorBody, description = "The token lacks meter-values:read, or the caller's team may not read the charger's sensitive data"),
        (status = 429, body = ErrorBody, description = "The caller's user holds `--stream-max-per-user` streams already (`Retry-After`)"),
        (status = 503, body = ErrorBody, description = "The server holds `--stream-max-total` streams already (`Retry-After`)"),
    ),
    security(("bearer" = ["meter-values:read"]), ("oauth2" = ["meter-values:read"]))
)]
pub async fn connector_stream(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, connector_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let connector: u32 = path_number(&connector_id, "Connector")?;
    let slot = match state.streams.take(caller.user_id()) {
        Ok(slot) => slot,
        Err(refused) => return Ok(refused.into_response()),
    };
    let subject = Subject::Connector {
        charger_uuid,
        connector,
    };
    let watched = watched(&state, &caller, &subject).await?;
    Ok(stream(state, caller, subject, watched, &headers, slot))
}

/// The stream of every connector's latest meter value at a site: the chargers of it whose
/// sensitive data the caller may read.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/latest-metervalues/stream",
    tag = "Sites",
    params(
        ("site_uuid" = String, Path, format = "uuid"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event: current values are sent first only if newer"),
    ),
    responses(
        (status = 200, description = "`text/event-stream` of `meter-value` events: `{charger_uuid, connectorId, meterValue}`, the current values first", content_type = "text/event-stream", body = String),
        (status = 403, body = ErrorBody, description = "The token lacks meter-values:read, or the caller may not read the site's sensitive data"),
        (status = 429, body = ErrorBody, description = "The caller's user holds `--stream-max-per-user` streams already (`Retry-After`)"),
        (status = 503, body = ErrorBody, description = "The server holds `--stream-max-total` streams already (`Retry-After`)"),
    ),
    security(("bearer" = ["meter-values:read"]), ("oauth2" = ["meter-values:read"]))
)]
pub async fn site_stream(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let slot = match state.streams.take(caller.user_id()) {
        Ok(slot) => slot,
        Err(refused) => return Ok(refused.into_response()),
    };
    let subject = Subject::Site { site_uuid };
    let watched = watched(&state, &caller, &subject).await?;
    Ok(stream(state, caller, subject, watched, &headers, slot))
}

/// What the caller may follow of `subject` now, or why not.
async fn watched(
    state: &AppState,
    caller: &Caller,
    subject: &Subject,
) -> Result<Watched, ApiError> {
    match subject {
        Subject::Connector {
            charger_uuid,
            connector,
        } => {
            let charger = charger_access_with_sensitive_data(state, caller, charger_uuid).await?;
            Ok(Watched {
                chargers: HashMap::from([(charger.identity, charger_uuid.clone())]),
                connector: Some(*connector),
            })
        }
        Subject::Site { site_uuid } => {
            let (site_id, permissions) = visible_site(state, caller, site_uuid).await?;
            forbidden_unless(permissions.sensitive)?;
            let (chargers, _) = state
                .store
                .chargers_visible_to(caller.user_id(), Some(site_id), SITE_CHARGERS, 0)
                .await?;
            let chargers = chargers
                .into_iter()
                .filter(|c| c.permissions.sensitive)
                .map(|c| (c.identity, c.uuid))
                .collect();
            Ok(Watched {
                chargers,
                connector: None,
            })
        }
    }
}

/// The change a client resumes after: its `Last-Event-ID` (`<epoch>-<seq>`) when this process
/// numbered it, else none (another replica's or an earlier run's id: every current value is
/// sent again rather than some missed).
fn last_event_id(headers: &HeaderMap, epoch: &str) -> u64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once('-'))
        .filter(|(of, _)| *of == epoch)
        .and_then(|(_, seq)| seq.parse().ok())
        .unwrap_or(0)
}

/// What a stream's forwarder follows.
struct Following {
    state: AppState,
    caller: Caller,
    /// The token the stream was opened with, checked again at each check.
    bearer: String,
    subject: Subject,
    watched: Watched,
    changes: Receiver<Arc<ValueChange>>,
    /// When the stream ends at its maximum life.
    ends_at: Instant,
}

fn stream(
    state: AppState,
    caller: Caller,
    subject: Subject,
    watched: Watched,
    headers: &HeaderMap,
    slot: Slot,
) -> Response {
    // Followed before the current values are read, so that no change falls between the two.
    let changes = state.cache.follow();
    let epoch = state.cache.epoch().to_string();
    let after = last_event_id(headers, &epoch);
    let bearer = bearer(headers).unwrap_or_default().to_string();
    let mut first = Vec::new();
    let held = state
        .cache
        .held_where(|identity| watched.chargers.contains_key(identity));
    for (identity, connector, reading, seq) in held {
        if seq > after
            && let Some(uuid) = watched.covers(&identity, connector)
        {
            let e = event(&epoch, seq, uuid, connector, &reading.meter_value);
            first.push((seq, e));
        }
    }
    first.sort_by_key(|(seq, _)| *seq);
    // A forwarder per client moves the changes it follows into the client's queue (as long as
    // the stream buffer); when the queue is full, the connection is not taking them: the
    // client is dropped, whatever the kernel and the HTTP layer still hold for it.
    let (queue, events) = tokio::sync::mpsc::channel(state.cache.stream_buffer());
    let ends_at = Instant::now() + life(state.streams.limits().max_life);
    let following = Following {
        state,
        caller,
        bearer,
        subject,
        watched,
        changes,
        ends_at,
    };
    tokio::spawn(forward(following, queue));
    let reconnect = Event::default().retry(RECONNECT_AFTER);
    let first = std::iter::once(reconnect).chain(first.into_iter().map(|(_, e)| e));
    let first = futures_util::stream::iter(first.map(Ok::<_, Infallible>));
    // The stream's place is held by its response, and given back when the response ends (its
    // last event written, or its client gone).
    let live = futures_util::stream::unfold((events, slot), |(mut events, slot)| async move {
        let e = events.recv().await?;
        Some((Ok::<_, Infallible>(e), (events, slot)))
    });
    Sse::new(first.chain(live))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A stream's life: `max_life` less up to a tenth, drawn anew for each stream, so that the
/// streams opened together (after a restart) do not all end, and reconnect, together.
pub(crate) fn life(max_life: Duration) -> Duration {
    let draw = (uuid::Uuid::new_v4().as_u64_pair().0 >> 11) as f64 / (1u64 << 53) as f64;
    max_life.saturating_sub((max_life / 10).mul_f64(draw))
}

async fn forward(mut f: Following, queue: tokio::sync::mpsc::Sender<Event>) {
    let mut next_check = Instant::now() + RECHECK;
    let mut checks: u32 = 0;
    loop {
        tokio::select! {
            change = f.changes.recv() => match change {
                Ok(change) => {
                    let uuid = f.watched.covers(&change.identity, change.connector_id);
                    let Some(uuid) = uuid else { continue };
                    let (seq, connector) = (change.seq, change.connector_id);
                    let e = event(f.state.cache.epoch(), seq, uuid, connector, &change.meter_value);
                    match queue.try_send(e) {
                        Ok(()) => {}
                        Err(TrySendError::Full(_)) => return dropped("slow"),
                        Err(TrySendError::Closed(_)) => return,
                    }
                }
                // Fell the stream buffer behind: too slow as well.
                Err(RecvError::Lagged(_)) => return dropped("slow"),
                Err(RecvError::Closed) => return,
            },
            _ = queue.closed() => return,
            // The server stops: the client's queue closes, then its response ends.
            _ = f.state.closing.cancelled() => return,
            // Its maximum life: the response ends after the events queued, and the client
            // reconnects with the last one's id.
            _ = tokio::time::sleep_until(f.ends_at) => {
                metrics::counter!("cms_api_stream_dropped_total", "reason" => "max_life")
                    .increment(1);
                tracing::debug!("a live stream reached its maximum life");
                return;
            }
            _ = tokio::time::sleep_until(next_check) => {
                if !still_allowed(&f).await {
                    return dropped("access");
                }
                checks += 1;
                if checks.is_multiple_of(REREAD_EVERY) {
                    match watched(&f.state, &f.caller, &f.subject).await {
                        Ok(watched) => f.watched = watched,
                        Err(_) => return dropped("access"),
                    }
                }
                next_check = Instant::now() + RECHECK;
            }
        }
    }
}

/// Whether the stream's token is still valid, with its scope, and its caller may still read
/// what it streams: from memory (crate::http::access), so within a second of a revocation or a
/// removed access on any replica. A store that cannot be asked ends the stream too.
async fn still_allowed(f: &Following) -> bool {
    let owner = f.state.access.authenticate(&f.state.store, &f.bearer).await;
    let Ok(Some(owner)) = owner else {
        return false;
    };
    // The scope the stream's route declared, as when it was opened.
    let caller = Caller(owner, f.caller.1);
    if caller.authorize().is_err() {
        return false;
    }
    match &f.subject {
        Subject::Connector { charger_uuid, .. } => {
            charger_access_with_sensitive_data(&f.state, &caller, charger_uuid)
                .await
                .is_ok()
        }
        Subject::Site { site_uuid } => {
            matches!(visible_site(&f.state, &caller, site_uuid).await, Ok((_, p)) if p.sensitive)
        }
    }
}

/// Counted by why, and logged.
pub(crate) fn dropped(reason: &'static str) {
    metrics::counter!("cms_api_stream_dropped_total", "reason" => reason).increment(1);
    tracing::info!(reason, "a live stream was ended");
}

/// A `meter-value` event: `{"charger_uuid", "connectorId", "meterValue"}`, the cached array as is.
fn event(epoch: &str, seq: u64, charger_uuid: &str, connector: u32, meter_value: &[u8]) -> Event {
    let array = std::str::from_utf8(meter_value).unwrap_or("[]");
    Event::default()
        .id(format!("{epoch}-{seq}"))
        .event("meter-value")
        .data(format!(
            r#"{{"charger_uuid":"{charger_uuid}","connectorId":{connector},"meterValue":{array}}}"#
        ))
}
