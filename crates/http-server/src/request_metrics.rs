//! `cms_http_requests_total{route,method,status}` and
//! `cms_http_request_duration_seconds{route,method}`: every request a router answers, by route
//! template (axum's `MatchedPath`, never the raw path, so no uuid or identity becomes a label),
//! method and status. Every label has a bounded set of values: a request no route matched is
//! `route="unmatched"`, and a method outside HTTP's own is `method="other"`.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// The route label of a request no route matched: its path is the client's choice.
pub const UNMATCHED: &str = "unmatched";

/// The middleware (`axum::middleware::from_fn(request_metrics::record)`), added with
/// `Router::layer` after every route and the fallback, so that it sees the matched path.
/// A request the listener ends itself (past its request timeout) never reaches here: those are
/// `cms_http_request_timeouts_total`.
pub async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned())
        .unwrap_or_else(|| UNMATCHED.to_owned());
    let method = method_label(request.method());
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    metrics::histogram!(
        "cms_http_request_duration_seconds",
        "route" => route.clone(),
        "method" => method,
    )
    .record(started.elapsed());
    metrics::counter!(
        "cms_http_requests_total",
        "route" => route,
        "method" => method,
        "status" => status,
    )
    .increment(1);
    response
}

/// HTTP's own methods by name; any other (a client may send any token) is `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_http_are_one_label() {
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        let made_up = Method::from_bytes(b"BREW").expect("a token is a method");
        assert_eq!(method_label(&made_up), "other");
    }
}
