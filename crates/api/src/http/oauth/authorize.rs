//! The authorization endpoint (RFC 6749 §4.1.1–4.1.2): the client sends the user's browser to
//! `GET /oauth/authorize`; the user logs in (`POST /oauth/login`), then approves or denies
//! (`POST /oauth/authorize`), and the browser is redirected back with a code or an error.
//!
//! Until the client id and redirect URI are known to be good, a failure is an error page: a
//! redirect to an unchecked URI would make this an open redirector. So is a request past a
//! length limit ([`super::limits`]).
//!
//! Every request must carry a PKCE `S256` challenge (RFC 9700 §2.1.1). Strangers can open
//! requests, so the store keeps only so many per client address and in all
//! ([`PendingLimits::DEFAULT`]).

use super::client_address::ClientAddress;
use super::codec::{Form, Params, decode_base64, parse_form, with_query};
use super::console::{CONSOLE_CLIENT_ID, is_own_console};
use super::limits::{oversized_parameter, oversized_query};
use super::page;
use crate::http::AppState;
use crate::http::error::ApiError;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::header::{CACHE_CONTROL, LOCATION};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use cms_store::Scope;
use cms_store::oauth::{AuthorizationRequest, BeginError, CodeChallenge, PendingLimits};

pub(super) const GONE: &str = "This authorization request has expired or was already used. \
    Return to the application and start again.";

/// Starts an authorization: checks the request, then shows the login page.
#[utoipa::path(
    get,
    path = "/oauth/authorize",
    tag = "OAuth",
    params(
        ("client_id" = String, Query, description = "The client's id"),
        ("redirect_uri" = Option<String>, Query, description = "Must equal the client's registered redirect URI; default: that URI. \
            The console's client (`cms-console`) must name `{scheme}://{the request's Host}/console/`"),
        ("response_type" = String, Query, description = "`code`"),
        ("scope" = String, Query, description = "Space-separated scope names (at least one)"),
        ("state" = Option<String>, Query, description = "Returned unchanged with the code or error; at most 1024 bytes"),
        ("code_challenge" = String, Query, description = "PKCE (RFC 7636), required: the base64url \
            SHA-256 of the code verifier, 43 characters"),
        ("code_challenge_method" = String, Query, description = "`S256`, required (`plain` is refused)"),
    ),
    responses(
        (status = 200, description = "The login page", content_type = "text/html", body = String),
        (status = 302, description = "Back to `redirect_uri` with `error` (`invalid_request`: \
            among others a missing `code_challenge` or a method other than `S256`; \
            `unsupported_response_type`, `invalid_scope`), `error_description` and `state`",
            headers(("Location" = String))),
        (status = 400, description = "Unknown client, a redirect URI that is not the registered \
            one, a repeated parameter, or one past its length limit (`client_id`, `redirect_uri` \
            2048 bytes, `state`, `scope` 1024, the query string 8192): an error page, never a \
            redirect", content_type = "text/html", body = String),
        (status = 429, description = "Too many authorization requests pending from the client's \
            address (20)", content_type = "text/html", body = String),
        (status = 503, description = "Too many authorization requests pending in all (10,000)",
            content_type = "text/html", body = String),
    )
)]
pub async fn authorize(
    State(state): State<AppState>,
    address: ClientAddress,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let query = query.unwrap_or_default();
    if let Some(message) = oversized_query(&query) {
        return refused_page(StatusCode::BAD_REQUEST, "oversized_request", &message);
    }
    let params = match Params::unique(parse_form(&query)) {
        Ok(params) => params,
        Err(message) => return page::error(StatusCode::BAD_REQUEST, &message),
    };
    if let Some(message) = oversized_parameter(&params) {
        return refused_page(StatusCode::BAD_REQUEST, "oversized_request", &message);
    }
    let Some(client_id) = params.get("client_id") else {
        return page::error(
            StatusCode::BAD_REQUEST,
            "The client_id parameter is missing.",
        );
    };
    let client = match state.store.oauth_client(client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => return page::error(StatusCode::BAD_REQUEST, "The client is not known."),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let redirect_uri = match params.get("redirect_uri") {
        _ if client.client_id == CONSOLE_CLIENT_ID => match params.get("redirect_uri") {
            Some(given) if is_own_console(given, &headers, state.tls) => given.to_string(),
            _ => {
                return page::error(
                    StatusCode::BAD_REQUEST,
                    "The console's redirect_uri must be /console/ on this server's own origin.",
                );
            }
        },
        Some(given) if given != client.redirect_uri => {
            return page::error(
                StatusCode::BAD_REQUEST,
                "The redirect_uri is not the one registered for this client.",
            );
        }
        _ => client.redirect_uri.clone(),
    };
    let client_state = params.get("state").map(str::to_string);
    let refuse = |error: &str, description: &str| {
        let mut query = vec![("error", error), ("error_description", description)];
        if let Some(client_state) = &client_state {
            query.push(("state", client_state));
        }
        redirect(&with_query(&redirect_uri, &query))
    };
    match params.get("response_type") {
        Some("code") => {}
        None => return refuse("invalid_request", "The response_type parameter is missing."),
        Some(_) => {
            return refuse(
                "unsupported_response_type",
                "Only the authorization code flow (response_type=code) is supported.",
            );
        }
    }
    let scopes = match requested_scopes(params.get("scope").unwrap_or("")) {
        Ok(scopes) => scopes,
        Err(description) => return refuse("invalid_scope", &description),
    };
    let code_challenge = match code_challenge(
        params.get("code_challenge"),
        params.get("code_challenge_method"),
    ) {
        Ok(challenge) => challenge,
        Err(description) => return refuse("invalid_request", description),
    };
    let request = AuthorizationRequest {
        client: client.id,
        redirect_uri: redirect_uri.clone(),
        redirect_uri_given: params.get("redirect_uri").is_some(),
        scopes,
        state: client_state.clone(),
        code_challenge,
        client_address: address.key().to_string(),
    };
    let kept = state
        .store
        .begin_authorization(&request, PendingLimits::DEFAULT, Utc::now())
        .await;
    match kept {
        Ok(secret) => page::login(StatusCode::OK, &client.name, &secret, None),
        Err(BeginError::TooManyFromAddress(_)) => refused_page(
            StatusCode::TOO_MANY_REQUESTS,
            "pending_per_address",
            "Too many authorization requests from your network are waiting for a login. Finish \
             one, or try again once they expire (after 10 minutes).",
        ),
        Err(BeginError::TooManyPending(_)) => refused_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "pending_total",
            "The service is too busy to start an authorization. Try again in a few minutes.",
        ),
        Err(BeginError::Store(e)) => ApiError::from(e).into_response(),
    }
}

/// An error page for a request refused by a limit, counted by `reason`.
fn refused_page(status: StatusCode, reason: &'static str, message: &str) -> Response {
    metrics::counter!("cms_oauth_refusals_total", "reason" => reason).increment(1);
    page::error(status, message)
}

/// The approval form's body (`application/x-www-form-urlencoded`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Documents the form, which is read with `parse_form`.
pub struct DecisionForm {
    /// The hidden field of the approval page.
    request: String,
    /// `approve` or `deny`.
    decision: String,
}

/// The user's decision: back to the client with a code, or with `error=access_denied`.
#[utoipa::path(
    post,
    path = "/oauth/authorize",
    tag = "OAuth",
    request_body(content = DecisionForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 302, description = "Back to `redirect_uri` with `code` and `state` when approved, \
            `error=access_denied` and `state` when denied", headers(("Location" = String))),
        (status = 400, description = "The request expired, was already decided, or nobody logged in",
            content_type = "text/html", body = String),
    )
)]
pub async fn decide(State(state): State<AppState>, body: Bytes) -> Response {
    let form = Form::parse(&body);
    let approve = match form.get("decision") {
        "approve" => true,
        "deny" => false,
        _ => return page::error(StatusCode::BAD_REQUEST, "Choose to authorize or to cancel."),
    };
    let decision = match state
        .store
        .decide_authorization(form.get("request"), approve, Utc::now())
        .await
    {
        Ok(Some(decision)) => decision,
        Ok(None) => return page::error(StatusCode::BAD_REQUEST, GONE),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let mut query = match &decision.code {
        Some(code) => vec![("code", code.as_str())],
        None => vec![
            ("error", "access_denied"),
            ("error_description", "The user denied the request."),
        ],
    };
    if let Some(client_state) = &decision.state {
        query.push(("state", client_state));
    }
    redirect(&with_query(&decision.redirect_uri, &query))
}

fn redirect(location: &str) -> Response {
    (
        StatusCode::FOUND,
        [(LOCATION, location), (CACHE_CONTROL, "no-store")],
    )
        .into_response()
}

/// The `scope` parameter: space-separated known names, at least one; repeats dropped.
pub fn requested_scopes(scope: &str) -> Result<Vec<String>, String> {
    let mut scopes: Vec<String> = Vec::new();
    for name in scope.split_whitespace() {
        if !Scope::is_known(name) {
            return Err(format!(
                "The scope {name:?} is not known; known scopes: {}.",
                Scope::names().join(" ")
            ));
        }
        if !scopes.iter().any(|s| s == name) {
            scopes.push(name.to_string());
        }
    }
    if scopes.is_empty() {
        return Err("Ask for at least one scope.".into());
    }
    Ok(scopes)
}

/// The PKCE parameters (RFC 7636 §4.3), both required: `plain` (RFC 7636's default method)
/// would show the verifier to whoever sees this request, so only `S256` is taken.
fn code_challenge(
    challenge: Option<&str>,
    method: Option<&str>,
) -> Result<CodeChallenge, &'static str> {
    let Some(challenge) = challenge else {
        return Err("PKCE is required: send a code_challenge with code_challenge_method=S256.");
    };
    match method {
        Some("S256") => {}
        Some("plain") | None => {
            return Err("The code_challenge_method must be S256: plain is not accepted.");
        }
        Some(_) => return Err("The code_challenge_method must be S256."),
    }
    let well_formed = (43..=128).contains(&challenge.len())
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if !well_formed {
        return Err("The code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.");
    }
    decode_base64(challenge)
        .and_then(|digest| <[u8; 32]>::try_from(digest).ok())
        .map(CodeChallenge::S256)
        .ok_or("An S256 code_challenge is the base64url SHA-256 of the verifier: 43 characters.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_challenges_decode_to_the_verifiers_digest() {
        // RFC 7636 Appendix B.
        let challenge = code_challenge(
            Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
            Some("S256"),
        );
        let Ok(CodeChallenge::S256(digest)) = challenge else {
            panic!("{challenge:?}");
        };
        assert_eq!(&digest[..4], &[19, 211, 30, 150]);
        assert_eq!(digest[31], 195);
    }

    #[test]
    fn only_an_s256_challenge_is_taken() {
        let ok = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(code_challenge(Some(ok), Some("S256")).is_ok());
        for (challenge, method) in [
            (None, None),
            (None, Some("S256")),
            (Some(ok), None),
            (Some(ok), Some("plain")),
            (Some(ok), Some("S512")),
            (Some("short"), Some("S256")),
            // 44 characters do not decode to 32 bytes.
            (Some(&"a".repeat(44)), Some("S256")),
            (Some(&"a/".repeat(22)), Some("S256")),
        ] {
            assert!(
                code_challenge(challenge, method).is_err(),
                "{challenge:?} {method:?}"
            );
        }
    }

    #[test]
    fn scopes_are_known_names_at_least_one() {
        assert_eq!(
            requested_scopes("chargers:read  teams:read chargers:read").unwrap(),
            ["chargers:read", "teams:read"]
        );
        assert!(requested_scopes("").is_err());
        assert!(requested_scopes("chargers:read root").is_err());
    }
}
