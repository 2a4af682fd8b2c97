//! The token endpoint (RFC 6749 §3.2, §4.1.3, §6): an authorization code or a refresh token for
//! an access token and a new refresh token. Bodies may be form-encoded (the RFC's) or JSON (as
//! Laravel Passport also takes them); clients authenticate with HTTP Basic or with
//! `client_id` + `client_secret` in the body. Answers and errors in Passport's shapes.

use super::authorize::requested_scopes;
use super::codec::{Params, decode_base64, form_decode, parse_form};
use super::console::CONSOLE_CLIENT_ID;
use crate::http::AppState;
use crate::http::error::ApiError;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, PRAGMA, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use cms_store::oauth::{GrantError, IssuedTokens, OAuthClient};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// A token request's parameters (form-encoded or JSON); which are required depends on
/// `grant_type`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is parsed by hand.
pub struct TokenRequest {
    /// `authorization_code` or `refresh_token`.
    grant_type: String,
    /// With `client_secret`, unless the client authenticates with HTTP Basic.
    client_id: Option<String>,
    client_secret: Option<String>,
    /// `authorization_code`: the code from the redirect.
    code: Option<String>,
    /// `authorization_code`: the authorization request's, when it named one.
    redirect_uri: Option<String>,
    /// `authorization_code`: PKCE, required when the authorization request had a challenge.
    code_verifier: Option<String>,
    /// `refresh_token`: the refresh token.
    refresh_token: Option<String>,
    /// `refresh_token`: narrows the new access token to these of the grant's scopes.
    scope: Option<String>,
}

/// A successful token response.
#[derive(Serialize, ToSchema)]
pub struct TokenResponse {
    /// `Bearer`.
    token_type: &'static str,
    /// Seconds until the access token expires.
    expires_in: u64,
    /// Send as `Authorization: Bearer <access_token>`.
    access_token: String,
    /// Single use: refreshing returns a new one and revokes this one.
    refresh_token: String,
    /// The access token's scopes, space-separated.
    scope: String,
}

/// A refused token request (RFC 6749 §5.2), with Laravel's `message`.
#[derive(Serialize, ToSchema)]
pub struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type` or
    /// `invalid_scope`.
    error: &'static str,
    error_description: String,
    /// The same as `error_description`.
    message: String,
}

/// Exchanges an authorization code or a refresh token for tokens. The client authenticates
/// with HTTP Basic (`client_id:client_secret`) or with both in the body; the console's public
/// client (`client_id=cms-console`) sends no secret.
#[utoipa::path(
    post,
    path = "/oauth/token",
    tag = "OAuth",
    request_body(content(
        (TokenRequest = "application/x-www-form-urlencoded"),
        (TokenRequest = "application/json"),
    )),
    responses(
        (status = 200, description = "The access token and its refresh token", body = TokenResponse),
        (status = 400, description = "`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`", body = OAuthErrorBody),
        (status = 401, description = "`invalid_client`: unknown client or wrong secret", body = OAuthErrorBody),
    )
)]
pub async fn token(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match issue(&state, &headers, &body).await {
        Ok(issued) => {
            let body = TokenResponse {
                token_type: "Bearer",
                expires_in: issued.expires_in,
                access_token: issued.access_token,
                refresh_token: issued.refresh_token,
                scope: issued.scopes.join(" "),
            };
            (no_store(), Json(body)).into_response()
        }
        Err(refusal) => refusal.into_response(),
    }
}

async fn issue(
    state: &AppState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<IssuedTokens, Refusal> {
    let params = token_params(headers, body)?;
    let grant_type = required(&params, "grant_type")?;
    if !matches!(grant_type, "authorization_code" | "refresh_token") {
        return Err(Refusal::new(
            "unsupported_grant_type",
            "The grant_type must be authorization_code or refresh_token.",
        ));
    }
    let client = authenticate_client(state, headers, &params).await?;
    let now = Utc::now();
    let issued = if grant_type == "authorization_code" {
        let code = required(&params, "code")?;
        state
            .store
            .exchange_authorization_code(
                &client,
                code,
                params.get("redirect_uri"),
                params.get("code_verifier"),
                now,
            )
            .await
    } else {
        let refresh_token = required(&params, "refresh_token")?;
        let scopes = match params.get("scope") {
            Some(scope) => {
                Some(requested_scopes(scope).map_err(|d| Refusal::new("invalid_scope", &d))?)
            }
            None => None,
        };
        state
            .store
            .refresh_access_token(&client, refresh_token, scopes.as_deref(), now)
            .await
    };
    issued.map_err(Refusal::from)
}

/// The client, authenticated by HTTP Basic (RFC 6749 §2.3.1: form-encoded id and secret) or
/// by body parameters; using both is refused.
async fn authenticate_client(
    state: &AppState,
    headers: &HeaderMap,
    params: &Params,
) -> Result<OAuthClient, Refusal> {
    let basic = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"));
    let (client_id, secret, by_header) = match basic {
        Some((_, encoded)) => {
            if params.get("client_secret").is_some() {
                return Err(Refusal::new(
                    "invalid_request",
                    "Authenticate the client one way: HTTP Basic or client_secret, not both.",
                ));
            }
            let decoded = decode_base64(encoded.trim())
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| Refusal::invalid_client(true))?;
            let (id, secret) = decoded
                .split_once(':')
                .ok_or_else(|| Refusal::invalid_client(true))?;
            (form_decode(id), form_decode(secret), true)
        }
        None => match (params.get("client_id"), params.get("client_secret")) {
            (Some(id), Some(secret)) => (id.to_string(), secret.to_string(), false),
            // The console's public client has no secret: PKCE and single-use refresh tokens
            // stand for it.
            (Some(CONSOLE_CLIENT_ID), None) => {
                return match state.store.oauth_client(CONSOLE_CLIENT_ID).await {
                    Ok(Some(client)) => Ok(client),
                    Ok(None) => Err(Refusal::invalid_client(false)),
                    Err(e) => Err(Refusal::Internal(ApiError::from(e))),
                };
            }
            _ => return Err(Refusal::invalid_client(false)),
        },
    };
    if params.get("client_id").is_some_and(|id| id != client_id) {
        return Err(Refusal::invalid_client(by_header));
    }
    match state
        .store
        .authenticate_oauth_client(&client_id, &secret)
        .await
    {
        Ok(Some(client)) => Ok(client),
        Ok(None) => Err(Refusal::invalid_client(by_header)),
        Err(e) => Err(Refusal::Internal(ApiError::from(e))),
    }
}

/// A token request's parameters, form-encoded or (as Passport also takes them) JSON.
pub(super) fn token_params(headers: &HeaderMap, body: &[u8]) -> Result<Params, Refusal> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    let pairs: Vec<(String, String)> = if json {
        json_pairs(body)?
    } else {
        parse_form(&String::from_utf8_lossy(body))
    };
    Params::unique(pairs).map_err(|message| Refusal::new("invalid_request", &message))
}

/// The parameter `name`, which the request must have.
fn required<'a>(params: &'a Params, name: &str) -> Result<&'a str, Refusal> {
    params.get(name).ok_or_else(|| {
        Refusal::new(
            "invalid_request",
            &format!("The {name} parameter is missing."),
        )
    })
}

/// A JSON object's members as parameters: strings, and numbers as their text (Passport's
/// numeric client ids); anything else is refused.
pub(crate) fn json_pairs(body: &[u8]) -> Result<Vec<(String, String)>, Refusal> {
    let malformed = || Refusal::new("invalid_request", "The body must be a JSON object.");
    let Ok(Value::Object(members)) = serde_json::from_slice::<Value>(body) else {
        return Err(malformed());
    };
    members
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name, text)),
            Value::Number(number) => Ok((name, number.to_string())),
            Value::Null => Ok((name, String::new())),
            _ => Err(Refusal::new(
                "invalid_request",
                &format!("The {name} parameter must be a string."),
            )),
        })
        .collect()
}

/// A refused token request.
pub(crate) enum Refusal {
    OAuth {
        status: StatusCode,
        error: &'static str,
        description: String,
        /// `invalid_client` after HTTP Basic: the answer names the scheme (RFC 6749 §5.2).
        challenge: bool,
    },
    Internal(ApiError),
}

impl Refusal {
    pub(super) fn new(error: &'static str, description: &str) -> Refusal {
        Refusal::OAuth {
            status: StatusCode::BAD_REQUEST,
            error,
            description: description.to_string(),
            challenge: false,
        }
    }

    fn invalid_client(challenge: bool) -> Refusal {
        Refusal::OAuth {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_client",
            description: "Client authentication failed.".into(),
            challenge,
        }
    }
}

impl From<GrantError> for Refusal {
    fn from(e: GrantError) -> Refusal {
        match e {
            GrantError::InvalidRequest(d) => Refusal::new("invalid_request", &d),
            GrantError::InvalidGrant(d) => Refusal::new("invalid_grant", &d),
            GrantError::InvalidScope(d) => Refusal::new("invalid_scope", &d),
            GrantError::Store(e) => Refusal::Internal(e.into()),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::OAuth {
                status,
                error,
                description,
                challenge,
            } => {
                let body = OAuthErrorBody {
                    error,
                    message: description.clone(),
                    error_description: description,
                };
                let mut response = (status, no_store(), Json(body)).into_response();
                if challenge {
                    response.headers_mut().insert(
                        WWW_AUTHENTICATE,
                        axum::http::HeaderValue::from_static("Basic realm=\"cms\""),
                    );
                }
                response
            }
            Refusal::Internal(e) => e.into_response(),
        }
    }
}

/// Token responses must not be cached (RFC 6749 §5.1).
fn no_store() -> [(axum::http::HeaderName, &'static str); 2] {
    [(CACHE_CONTROL, "no-store"), (PRAGMA, "no-cache")]
}
