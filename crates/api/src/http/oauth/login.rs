//! The login step of an authorization (`POST /oauth/login`): the user's e-mail and password bind
//! the user to the pending request and lead to the approval page.
//!
//! Guessing is limited three ways: the limiter ([`LoginThrottle`]) refuses logins, without
//! checking the password, after a few failures a minute of one account from one address (more
//! from one address, more still of one account from anywhere); a pending request ends after
//! `MAX_FAILED_LOGINS_PER_REQUEST` failures; and each check runs off the async workers, one per
//! core at a time (in the store), so that guesses cannot starve other requests.

use super::authorize::GONE;
use super::client_address::ClientAddress;
use super::codec::Form;
use super::page;
use super::throttle::LoginThrottle;
use crate::http::AppState;
use crate::http::error::ApiError;
use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use std::sync::Arc;
use std::time::Instant;

const WRONG: &str = "These credentials do not match our records.";
const ENDED: &str = "Too many failed logins: this authorization request has ended. Return to \
    the application and start again.";

/// The login form's body (`application/x-www-form-urlencoded`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Documents the form, which is read with `parse_form`.
pub struct LoginForm {
    /// The hidden field of the login page.
    request: String,
    email: String,
    password: String,
}

/// Logs the user in to a pending authorization; shows the approval page.
#[utoipa::path(
    post,
    path = "/oauth/login",
    tag = "OAuth",
    request_body(content = LoginForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "The approval page", content_type = "text/html", body = String),
        (status = 401, description = "Wrong e-mail or password: the login page again, with the \
            error; after the 5th failure on one request, an error page (the request has ended)",
            content_type = "text/html", body = String),
        (status = 400, description = "The request expired or was already used", content_type = "text/html", body = String),
        (status = 429, description = "Too many failed logins within a minute: 5 for this e-mail \
            from this address, 50 for this e-mail from every address, or 20 from this address: \
            the login page with the error, and `Retry-After` (seconds). The password is not \
            checked, even a right one.", content_type = "text/html", body = String,
            headers(("Retry-After" = u64, description = "Seconds until a login may be tried again"))),
    )
)]
pub async fn login(
    State(state): State<AppState>,
    Extension(throttle): Extension<Arc<LoginThrottle>>,
    address: ClientAddress,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    let request = form.get("request");
    let now = Utc::now();
    let pending = match state.store.pending_authorization(request, now).await {
        Ok(Some(pending)) if !pending.logged_in => pending,
        Ok(_) => return page::error(StatusCode::BAD_REQUEST, GONE),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let attempt = match throttle.begin(form.get("email"), address.key(), Instant::now()) {
        Ok(attempt) => attempt,
        Err(locked) => {
            refused("login_locked");
            let secs = locked.retry_after_secs();
            let message = format!("Too many failed logins. Try again in {secs} seconds.");
            let mut page = page::login(
                StatusCode::TOO_MANY_REQUESTS,
                &pending.client_name,
                request,
                Some(&message),
            );
            page.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(secs));
            return page;
        }
    };
    metrics::counter!("cms_oauth_password_checks_total").increment(1);
    let checked = state
        .store
        .user_with_password(form.get("email"), form.get("password"))
        .await;
    let user = match checked {
        Ok(Some(user)) => user,
        Ok(None) => {
            attempt.failed(Instant::now());
            return match state.store.record_failed_login(request, now).await {
                Ok(false) => page::login(
                    StatusCode::UNAUTHORIZED,
                    &pending.client_name,
                    request,
                    Some(WRONG),
                ),
                Ok(true) => {
                    refused("request_ended");
                    page::error(StatusCode::UNAUTHORIZED, ENDED)
                }
                Err(e) => ApiError::from(e).into_response(),
            };
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    drop(attempt);
    match state
        .store
        .log_in_authorization(request, user.id, now)
        .await
    {
        Ok(Some(approval)) => page::approve(&pending.client_name, &pending.scopes, &approval),
        Ok(None) => page::error(StatusCode::BAD_REQUEST, GONE),
        Err(e) => ApiError::from(e).into_response(),
    }
}

fn refused(reason: &'static str) {
    metrics::counter!("cms_oauth_refusals_total", "reason" => reason).increment(1);
}
