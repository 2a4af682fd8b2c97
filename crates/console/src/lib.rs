//! The operator console, served under `/console/` by `cms up` and `cms api` from the same
//! origin as the REST API it reads. Its files are plain JavaScript modules, CSS and HTML built
//! into the binary (no build step, nothing to install at run time: docs/decisions.md, "The
//! console is plain JavaScript modules"), each answered with a strict Content-Security-Policy:
//! no inline script or style, nothing fetched from another origin, not framed.

mod assets;

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderName, HeaderValue, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

pub use assets::ASSETS;

/// Every console response's policy: scripts, styles, images and connections from this origin
/// only, no plugins, no framing, forms posting only here (the OAuth login page).
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The console's routes: `/` and `/console` redirect to `/console/`, which is the app; any
/// other path under it is one of its files or a 404.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/console/") }))
        .route("/console", get(|| async { Redirect::to("/console/") }))
        .route("/console/", get(|| async { file("index.html") }))
        .route(
            "/console/{*path}",
            get(|uri: Uri| async move {
                let path = uri.path().trim_start_matches("/console/");
                file(path)
            }),
        )
}

/// One of the console's files with its type and the headers every console answer carries.
fn file(path: &str) -> Response {
    let Some(asset) = assets::find(path) else {
        return (
            StatusCode::NOT_FOUND,
            secured(),
            [(CONTENT_TYPE, HeaderValue::from_static("text/plain"))],
            "Not Found.",
        )
            .into_response();
    };
    // index.html names the other files without a version: always revalidated, so an upgrade
    // of cms is never answered with an old file from a browser's cache.
    (
        StatusCode::OK,
        secured(),
        [
            (CONTENT_TYPE, HeaderValue::from_static(asset.content_type)),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        asset.body,
    )
        .into_response()
}

fn secured() -> [(HeaderName, HeaderValue); 4] {
    [
        (
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        ),
        (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
    ]
}

#[cfg(test)]
mod tests;
