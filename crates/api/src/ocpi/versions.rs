//! The versions module: which versions cms speaks (2.2.1 only) and where its modules are.
//! Any party with a token reaches it, token A included: the handshake starts here.

use super::auth::{AnyParty, BaseUrl};
use super::reply::ok;
use crate::http::AppState;
use axum::Router;
use axum::response::Response;
use axum::routing::get;
use cms_ocpi::versions::{Version, cpo_details};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/versions", get(versions))
        .route("/2.2.1", get(details))
}

/// `GET /ocpi/versions`.
async fn versions(_: AnyParty, BaseUrl(base): BaseUrl) -> Response {
    ok(vec![Version {
        version: cms_ocpi::VERSION.into(),
        url: format!("{base}/ocpi/{}", cms_ocpi::VERSION),
    }])
}

/// `GET /ocpi/2.2.1`.
async fn details(_: AnyParty, BaseUrl(base): BaseUrl) -> Response {
    ok(cpo_details(&format!("{base}/ocpi/{}", cms_ocpi::VERSION)))
}
