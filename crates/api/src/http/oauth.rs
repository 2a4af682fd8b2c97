//! OAuth 2.0 authorization code flow with PKCE and refresh tokens, as Laravel Passport serves
//! it: `/oauth/authorize` (login and approval pages), `/oauth/login`, `/oauth/token`. The access
//! tokens it issues authenticate API requests like personal access tokens do
//! ([`crate::http::auth::Caller`]).

mod authorize;
mod codec;
mod page;
mod token;

use crate::http::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(authorize::authorize, authorize::decide))
        .routes(routes!(authorize::login))
        .routes(routes!(token::token))
}
