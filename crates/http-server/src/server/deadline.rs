//! The request timeout: a whole request (its body read and its handler) within a bound, else
//! an answer that says whose side was slow: 408 while the client was still sending its body,
//! 503 when the server had it all and did not answer in time.

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode, request};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use metrics::{Counter, counter};
use serde_json::json;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tower_service::Service;

/// `cms_http_request_timeouts_total{side}`: `client` for a body that did not arrive in time,
/// `server` for a handler that did not answer in time.
#[derive(Clone)]
pub struct TimeoutCounters {
    client: Counter,
    server: Counter,
}

impl TimeoutCounters {
    /// The counters of `listener` (`http`, `ops`).
    pub fn new(listener: &'static str) -> Self {
        let by_side = |side: &'static str| counter!("cms_http_request_timeouts_total", "listener" => listener, "side" => side);
        TimeoutCounters {
            client: by_side("client"),
            server: by_side("server"),
        }
    }
}

/// When the request timeout answers in the handler's stead (a request extension). A handler
/// that waits for a charger (`?wait=`) answers before it with what it has (202 and where to
/// look), rather than be cut off with a 503 that invites a retry of what was already taken.
#[derive(Debug, Clone, Copy)]
pub struct AnswerBy(pub tokio::time::Instant);

/// Room left for a handler's answer after its wait ends.
const ANSWER_ROOM: Duration = Duration::from_secs(1);

impl AnswerBy {
    /// The end of a wait of `wait` from now, brought forward to leave the answer its room
    /// before the request timeout, if this request has one.
    pub fn wait_until(answer_by: Option<AnswerBy>, wait: Duration) -> tokio::time::Instant {
        let wanted = tokio::time::Instant::now() + wait;
        match answer_by {
            Some(AnswerBy(at)) => wanted.min(at.checked_sub(ANSWER_ROOM).unwrap_or(at)),
            None => wanted,
        }
    }
}

/// Runs the request through `router`, bounded by `limit`.
pub async fn answer_within(
    limit: Duration,
    mut router: Router,
    mut parts: request::Parts,
    body: Incoming,
    timeouts: TimeoutCounters,
) -> Response {
    parts
        .extensions
        .insert(AnswerBy(tokio::time::Instant::now() + limit));
    let (method, path) = (parts.method.clone(), parts.uri.path().to_owned());
    let arrived = Arc::new(AtomicBool::new(body.is_end_stream()));
    let body = TrackedBody {
        inner: body,
        arrived: arrived.clone(),
    };
    let request = axum::extract::Request::from_parts(parts, axum::body::Body::new(body));
    // A Router is always ready: `call` needs no `poll_ready` first.
    match tokio::time::timeout(limit, router.call(request)).await {
        Ok(Ok(response)) => response,
        Ok(Err(never)) => match never {},
        Err(_) if !arrived.load(Ordering::Relaxed) => {
            timeouts.client.increment(1);
            let message = "The request body did not arrive in time.";
            let mut response = (
                StatusCode::REQUEST_TIMEOUT,
                Json(json!({"message": message})),
            )
                .into_response();
            // The rest of the body may still come: this connection cannot carry another request.
            let close = HeaderValue::from_static("close");
            response.headers_mut().insert(CONNECTION, close);
            response
        }
        Err(_) => {
            timeouts.server.increment(1);
            tracing::warn!(%method, path, ?limit, "request timed out in its handler");
            let message = "The server did not answer in time; retry later.";
            let mut response = (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"message": message})),
            )
                .into_response();
            let retry = HeaderValue::from_static("5");
            response.headers_mut().insert(RETRY_AFTER, retry);
            response
        }
    }
}

/// A request body that records when it has been read to its end.
struct TrackedBody {
    inner: Incoming,
    arrived: Arc<AtomicBool>,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || this.inner.is_end_stream() {
            this.arrived.store(true, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
