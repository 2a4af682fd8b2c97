//! Bearer authentication: every API request names a personal access token (`<id>|<secret>`) or
//! an OAuth access token (`<selector>.<verifier>`, never with `|`), checked against the token
//! held in memory once verified (crate::http::access: a revoked token is forgotten within a poll of
//! the access change log, on every replica) or else against the store.

use crate::http::AppState;
use crate::http::error::ApiError;
use crate::http::openapi::DeclaredScopes;
use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use cms_store::TokenOwner;
use std::sync::Arc;

/// The token of `Authorization: Bearer <token>`.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
}

/// The authenticated caller, with the scope the route they called declares (its OpenAPI
/// operation's `security`, crate::http::openapi::DeclaredScopes), if any.
pub struct Caller(pub TokenOwner, pub(crate) Option<&'static str>);

impl Caller {
    /// 403 unless the token carries the scope the route declares: what a handler checks first,
    /// so that the scope a route demands is the one its documentation states. A route that
    /// declares none refuses everyone.
    pub fn authorize(&self) -> Result<(), ApiError> {
        match self.1 {
            Some(scope) if self.0.allows(scope) => Ok(()),
            _ => Err(ApiError::Forbidden),
        }
    }

    pub fn user_id(&self) -> i64 {
        self.0.user_id
    }

    /// The e-mail of the user the token speaks for (held with the token).
    pub fn email(&self) -> Option<String> {
        self.0.email.clone()
    }
}

/// 403 when the request's bearer is an OAuth access token: a personal access token outlives
/// the OAuth grant it would be made under (revoking the application would leave it working),
/// so an application a user authorized may not mint one, nor a new secret for one. As in
/// Laravel Passport, where personal access tokens are made by the user themself.
pub fn not_through_oauth(headers: &axum::http::HeaderMap) -> Result<(), ApiError> {
    match bearer(headers).and_then(cms_store::access_log::TokenKey::parse) {
        Some((cms_store::access_log::TokenKey::OAuth(_), _)) => Err(ApiError::ForbiddenBecause(
            "Personal access tokens are made with a personal access token, not through an \
             OAuth application."
                .into(),
        )),
        _ => Ok(()),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers).ok_or(ApiError::Unauthenticated)?;
        let Some(owner) = state.access.authenticate(&state.store, token).await? else {
            return Err(ApiError::Unauthenticated);
        };
        let declared = parts
            .extensions
            .get::<Arc<DeclaredScopes>>()
            .zip(parts.extensions.get::<MatchedPath>())
            .and_then(|(scopes, path)| scopes.scope(&parts.method, path.as_str()));
        Ok(Caller(owner, declared))
    }
}
