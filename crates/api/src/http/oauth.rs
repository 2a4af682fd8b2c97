//! OAuth 2.0 authorization code flow with PKCE and refresh tokens, as Laravel Passport serves
//! it: `/oauth/authorize` (login and approval pages), `/oauth/login`, `/oauth/token`, `/oauth/revoke`. The access
//! tokens it issues authenticate API requests like personal access tokens do
//! ([`crate::http::auth::Caller`]). Hardened after RFC 9700: PKCE `S256` only, bounded
//! requests, and a login limiter ([`throttle`]) whose counts live in this process.

mod authorize;
mod client_address;
pub(crate) mod codec;
mod console;
mod limits;
mod login;
mod page;
mod revoke;
mod throttle;
pub(crate) mod token;

use crate::http::AppState;
use axum::Extension;
use std::sync::Arc;
use throttle::{LoginThrottle, ThrottlePolicy};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The OAuth routes, with one login limiter for them (one per router, so per process).
pub fn routes() -> OpenApiRouter<AppState> {
    let throttle = Arc::new(LoginThrottle::new(ThrottlePolicy::DEFAULT));
    OpenApiRouter::new()
        .routes(routes!(authorize::authorize, authorize::decide))
        .routes(routes!(login::login))
        .routes(routes!(token::token))
        .routes(routes!(revoke::revoke))
        .layer(Extension(throttle))
}
