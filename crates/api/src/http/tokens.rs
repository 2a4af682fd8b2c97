//! The caller's personal access tokens: list, create, regenerate, revoke. A token's secret is
//! shown once, in the answer that made it. A token can hand out only scopes it has itself
//! (any with `*`), and can regenerate or revoke only tokens whose every scope it holds, so a
//! narrow token can neither mint, take nor remove a wider one.

use crate::http::AppState;
use crate::http::auth::{Caller, not_through_oauth};
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{not_found, path_number};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{EmptyBody, ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use cms_store::Scope;
use cms_store::tokens::PersonalAccessToken;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
        .routes(routes!(regenerate))
}

/// A personal access token, without its secret.
#[derive(Serialize, ToSchema)]
pub struct TokenBody {
    id: i64,
    name: String,
    scopes: Vec<String>,
    /// When it last authenticated a request, to the minute; null if never.
    last_used_at: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<PersonalAccessToken> for TokenBody {
    fn from(t: PersonalAccessToken) -> Self {
        TokenBody {
            id: t.id,
            name: t.name,
            scopes: t.scopes,
            last_used_at: t.last_used_at,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

/// A token just made or regenerated, with its secret: shown this once.
#[derive(Serialize, ToSchema)]
pub struct NewTokenBody {
    data: TokenBody,
    /// `<id>|<40 characters>`: send as `Authorization: Bearer <plain_text_token>`.
    plain_text_token: String,
}

/// The body of `POST /api/v3/user/tokens`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewTokenRequest {
    #[schema(max_length = 255)]
    name: String,
    /// Scope names (see the `oauth2` security scheme), at least one; only scopes the
    /// requesting token has itself (any, with `*`).
    #[schema(min_items = 1)]
    scopes: Vec<String>,
}

/// The caller's live tokens, newest first, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/user/tokens",
    tag = "Personal access tokens",
    params(("page" = Option<i64>, Query, description = "Page number, from 1")),
    responses(
        (status = 200, description = "A page of tokens", body = Page<TokenBody>),
    ),
    security(("bearer" = ["tokens:read"]), ("oauth2" = ["tokens:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<TokenBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let offset = page_offset(page);
    let (tokens, total) = state
        .store
        .personal_access_tokens(caller.user_id(), PER_PAGE, offset)
        .await?;
    let data = tokens.into_iter().map(TokenBody::from).collect();
    Ok(Json(Page::new("/api/v3/user/tokens", page, total, data)))
}

/// Creates a token for the caller.
#[utoipa::path(
    post,
    path = "/api/v3/user/tokens",
    tag = "Personal access tokens",
    request_body = NewTokenRequest,
    responses(
        (status = 201, description = "The token, with its secret (shown once)", body = NewTokenBody),
        (status = 403, body = ErrorBody, description = "The token lacks tokens:write, or is an OAuth access token"),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid: `name` missing or too long; \
            `scopes` missing, empty or not an array; `scopes.N` unknown, or not held by the \
            requesting token"),
    ),
    security(("bearer" = ["tokens:write"]), ("oauth2" = ["tokens:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    mut input: Input,
) -> Result<(StatusCode, Json<NewTokenBody>), ApiError> {
    caller.authorize()?;
    not_through_oauth(&headers)?;
    let name = input.required_string("name", 255.0);
    let scopes = grantable_scopes(&caller, &mut input);
    input.finish()?;
    let (Some(name), Some(scopes)) = (name, scopes) else {
        return Err(ApiError::Internal(
            "validation passed without values".into(),
        ));
    };
    let (token, plain) = state
        .store
        .create_personal_access_token(caller.user_id(), &name, &scopes)
        .await?;
    Ok((StatusCode::CREATED, Json(new_token(token, plain))))
}

/// Revokes one of the caller's tokens: it stops working at once.
#[utoipa::path(
    delete,
    path = "/api/v3/user/tokens/{token_id}",
    tag = "Personal access tokens",
    params(("token_id" = i64, Path)),
    responses(
        (status = 200, description = "An empty object: the token is revoked", body = EmptyBody),
        (status = 403, body = ErrorBody, description = "The token lacks tokens:write, or lacks a \
            scope of the token to revoke"),
    ),
    security(("bearer" = ["tokens:write"]), ("oauth2" = ["tokens:write"]))
)]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(token_id): Path<String>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let id: i64 = path_number(&token_id, "Token")?;
    no_wider_than_caller(&state, &caller, id).await?;
    if !state
        .store
        .revoke_personal_access_token(caller.user_id(), id)
        .await?
    {
        return Err(not_found("Token"));
    }
    Ok(Json(EmptyBody {}))
}

/// Gives one of the caller's tokens a new secret, keeping its id, name and scopes; the old
/// secret stops working at once.
#[utoipa::path(
    post,
    path = "/api/v3/user/tokens/{token_id}/regenerate",
    tag = "Personal access tokens",
    params(("token_id" = i64, Path)),
    responses(
        (status = 200, description = "The token, with its new secret (shown once)", body = NewTokenBody),
        (status = 403, body = ErrorBody, description = "The token lacks tokens:write, or lacks a \
            scope of the token to regenerate, or is an OAuth access token"),
    ),
    security(("bearer" = ["tokens:write"]), ("oauth2" = ["tokens:write"]))
)]
pub async fn regenerate(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(token_id): Path<String>,
) -> Result<Json<NewTokenBody>, ApiError> {
    caller.authorize()?;
    not_through_oauth(&headers)?;
    let id: i64 = path_number(&token_id, "Token")?;
    no_wider_than_caller(&state, &caller, id).await?;
    let (token, plain) = state
        .store
        .regenerate_personal_access_token(caller.user_id(), id)
        .await?
        .ok_or_else(|| not_found("Token"))?;
    Ok(Json(new_token(token, plain)))
}

/// 404 unless `id` is a live token of the caller's; 403 unless the caller holds every scope of
/// it. A token's scopes never change, so the check stays true until the change is made.
async fn no_wider_than_caller(state: &AppState, caller: &Caller, id: i64) -> Result<(), ApiError> {
    let target = state
        .store
        .personal_access_token(caller.user_id(), id)
        .await?
        .ok_or_else(|| not_found("Token"))?;
    if caller.0.covers(&target.scopes) {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// `scopes`: a non-empty array of known scope names the caller's token holds; repeats dropped.
fn grantable_scopes(caller: &Caller, input: &mut Input) -> Option<Vec<String>> {
    let items = input.array("scopes", Rules::required()).flatten()?;
    if items.is_empty() {
        input.fail("scopes", "The scopes field is required.");
        return None;
    }
    let mut scopes: Vec<String> = Vec::new();
    let mut valid = true;
    for (n, item) in items.iter().enumerate() {
        let field = format!("scopes.{n}");
        match item.as_str() {
            Some(name) if !Scope::is_known(name) => {
                input.fail(&field, format!("The selected {field} is invalid."));
                valid = false;
            }
            Some(name) if !caller.0.allows(name) => {
                input.fail(
                    &field,
                    format!("The {field} scope is not held by the token making this request."),
                );
                valid = false;
            }
            Some(name) => {
                if !scopes.iter().any(|s| s == name) {
                    scopes.push(name.to_string());
                }
            }
            None => {
                input.fail(&field, format!("The {field} field must be a string."));
                valid = false;
            }
        }
    }
    valid.then_some(scopes)
}

fn new_token(token: PersonalAccessToken, plain: String) -> NewTokenBody {
    NewTokenBody {
        data: token.into(),
        plain_text_token: plain,
    }
}
