//! Token revocation (RFC 7009), the console's sign-out: whoever holds an access or refresh
//! token may end it, and with it every token of its grant ([`cms_store::oauth::TokenRevocation`]).
//! An unknown, malformed or already revoked token is answered like a revoked one (§2.2): the
//! answer tells nothing about which tokens exist. The token is never logged.
//!
//! The revocation is in force on this replica from the answer on (a successful request that
//! changed something waits for the access change log, crate::http's `access_in_force`), and
//! on the others within the log's poll.

use super::token::{Refusal, token_params};
use crate::http::error::ApiError;
use crate::http::{AppState, ChangesNoAccess};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, PRAGMA};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use cms_store::oauth::TokenRevocation;

/// A revocation request's form.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Documents the form, which is parsed by hand.
pub struct RevocationRequest {
    /// The access or refresh token to revoke.
    token: String,
    /// `access_token` or `refresh_token`; both kinds are looked up whatever it says.
    token_type_hint: Option<String>,
    /// When given, the token is revoked only if it was issued to this client.
    client_id: Option<String>,
}

/// Revokes an access or refresh token and every token of its grant (RFC 7009).
#[utoipa::path(
    post,
    path = "/oauth/revoke",
    tag = "OAuth",
    request_body(content = RevocationRequest, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "An empty body: the token no longer works (also for a token \
            that is unknown or was already revoked)"),
        (status = 400, description = "`invalid_request` (no `token`, a repeated parameter), or \
            `unauthorized_client`: the token was issued to another client than `client_id`",
            body = super::token::OAuthErrorBody),
    )
)]
pub async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let params = match token_params(&headers, &body) {
        Ok(params) => params,
        Err(refusal) => return refusal.into_response(),
    };
    let Some(token) = params.get("token") else {
        return Refusal::new("invalid_request", "The token parameter is missing.").into_response();
    };
    match state
        .store
        .revoke_oauth_token(token, params.get("client_id"), Utc::now())
        .await
    {
        Ok(TokenRevocation::Revoked) => revoked(),
        // Nothing changed: nothing for this replica to read before it answers.
        Ok(TokenRevocation::Unknown) => {
            let mut response = revoked();
            response.extensions_mut().insert(ChangesNoAccess);
            response
        }
        Ok(TokenRevocation::OtherClient) => Refusal::new(
            "unauthorized_client",
            "The token was not issued to this client.",
        )
        .into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

fn revoked() -> Response {
    (
        StatusCode::OK,
        [(CACHE_CONTROL, "no-store"), (PRAGMA, "no-cache")],
    )
        .into_response()
}
