//! The caller's OAuth grants, the applications they authorized (Laravel Passport's
//! `/oauth/tokens`): list and revoke. Revoking a grant ends every access and refresh token the
//! application holds from it, at once. As with personal access tokens, a token may revoke only
//! a grant whose every scope it holds, so a narrow token cannot cut off a wider application.
//! Registering clients stays with the command line (`cms oauth client create`).

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::{not_found, path_number};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{EmptyBody, ErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::Utc;
use cms_store::oauth::OAuthGrant;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const PATH: &str = "/api/v3/user/oauth-grants";

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(revoke))
}

/// The application a grant is for.
#[derive(Serialize, ToSchema)]
pub struct GrantClientBody {
    /// Its public `client_id`.
    id: String,
    name: String,
}

/// An application the user authorized, and what it may do.
#[derive(Serialize, ToSchema)]
pub struct GrantBody {
    id: i64,
    client: GrantClientBody,
    /// The scopes the user approved.
    scopes: Vec<String>,
    /// When the user approved it.
    created_at: String,
    /// When the application last obtained tokens with it (the code's exchange or a refresh).
    updated_at: String,
}

impl From<OAuthGrant> for GrantBody {
    fn from(g: OAuthGrant) -> Self {
        GrantBody {
            id: g.id,
            client: GrantClientBody {
                id: g.client_id,
                name: g.client_name,
            },
            scopes: g.scopes,
            created_at: g.created_at,
            updated_at: g.updated_at,
        }
    }
}

/// The caller's live grants (unrevoked, with a refresh token still usable), newest first, 25 a
/// page.
#[utoipa::path(
    get,
    path = "/api/v3/user/oauth-grants",
    tag = "OAuth grants",
    params(("page" = Option<i64>, Query, description = "Page number, from 1")),
    responses(
        (status = 200, description = "A page of grants", body = Page<GrantBody>),
    ),
    security(("bearer" = ["tokens:read"]), ("oauth2" = ["tokens:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<GrantBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let (grants, total) = state
        .store
        .oauth_grants(caller.user_id(), PER_PAGE, page_offset(page), Utc::now())
        .await?;
    let data = grants.into_iter().map(GrantBody::from).collect();
    Ok(Json(Page::new(PATH, page, total, data)))
}

/// Revokes one of the caller's grants: every access and refresh token of it stops working at
/// once.
#[utoipa::path(
    delete,
    path = "/api/v3/user/oauth-grants/{grant_id}",
    tag = "OAuth grants",
    params(("grant_id" = i64, Path)),
    responses(
        (status = 200, description = "An empty object: the grant is revoked", body = EmptyBody),
        (status = 403, body = ErrorBody, description = "The token lacks tokens:write, or lacks a \
            scope of the grant (unless it has `*`)"),
    ),
    security(("bearer" = ["tokens:write"]), ("oauth2" = ["tokens:write"]))
)]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    Path(grant_id): Path<String>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let id: i64 = path_number(&grant_id, "Grant")?;
    let now = Utc::now();
    let grant = state
        .store
        .oauth_grant(caller.user_id(), id, now)
        .await?
        .ok_or_else(|| not_found("Grant"))?;
    // A grant's scopes never change, so the check stays true until the revocation.
    if !caller.0.covers(&grant.scopes) {
        return Err(ApiError::Forbidden);
    }
    if !state
        .store
        .revoke_oauth_grant(caller.user_id(), id, now)
        .await?
    {
        return Err(not_found("Grant"));
    }
    Ok(Json(EmptyBody {}))
}
