//! Bearer authentication: every API request names a personal access token (`<id>|<secret>`) or
//! an OAuth access token (`<selector>.<verifier>`, never with `|`), checked against the store on
//! each request so that a revoked or expired token stops working at once.

use crate::http::AppState;
use crate::http::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use cms_store::TokenOwner;

/// The authenticated caller.
pub struct Caller(pub TokenOwner);

impl Caller {
    /// 403 unless the token carries `scope`.
    pub fn require(&self, scope: &str) -> Result<(), ApiError> {
        if self.0.allows(scope) {
            Ok(())
        } else {
            Err(ApiError::Forbidden)
        }
    }

    pub fn user_id(&self) -> i64 {
        self.0.user_id
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .ok_or(ApiError::Unauthenticated)?;
        let owner = if token.contains('|') {
            state.store.authenticate_token(token).await?
        } else {
            state
                .store
                .authenticate_access_token(token, chrono::Utc::now())
                .await?
        };
        match owner {
            Some(owner) => Ok(Caller(owner)),
            None => Err(ApiError::Unauthenticated),
        }
    }
}
