//! A team's id tags: who may charge at the sites of the team (and of the teams it lets in).
//! As a team's domains: any member manages them with the teams scopes; a team the caller does
//! not belong to is a 404. A tag in the path is matched in any case, as chargers match tags.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::id_tag_input::read_id_tag;
use crate::http::input::Input;
use crate::http::lookup::not_found;
use crate::http::pagination::Page;
use crate::http::schema::{Data, EmptyBody, ValidationErrorBody};
use crate::http::team_owned::page_of;
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::StoreError;
use cms_store::id_tags::IdTag;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, replace, destroy))
}

/// An id tag of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct IdTagBody {
    /// As written; unique in the team in any case.
    #[schema(max_length = 20)]
    pub id_tag: String,
    #[schema(value_type = IdTagStatusName)]
    pub status: String,
    /// After it the tag is no longer accepted; UTC in whole seconds.
    #[schema(required = true, format = DateTime, example = "2026-11-21T10:00:00Z")]
    pub expiry_date: Option<String>,
    /// The tag's group (OCPP parentIdTag).
    #[schema(required = true, max_length = 20)]
    pub parent_id_tag: Option<String>,
    /// Whose card it is, for people.
    #[schema(required = true, max_length = 255)]
    pub name: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<IdTag> for IdTagBody {
    fn from(t: IdTag) -> Self {
        IdTagBody {
            id_tag: t.id_tag,
            status: t.status,
            expiry_date: t.expiry_date,
            parent_id_tag: t.parent_id_tag,
            name: t.name,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

/// The body of a new tag, or of a tag's replacement (PUT: every field is replaced; one left
/// out takes its default).
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct IdTagRequest {
    /// 1 to 20 printable ASCII characters, no space. Required on create; on replacement it may
    /// be left out, or give the path's tag in another case (no other tag).
    #[schema(min_length = 1, max_length = 20, pattern = "^[!-~]{1,20}$")]
    id_tag: Option<String>,
    /// Default `Accepted`.
    status: Option<IdTagStatusName>,
    /// RFC 3339; stored in UTC, whole seconds. Default null.
    #[schema(format = DateTime)]
    expiry_date: Option<String>,
    /// Like `id_tag`. Default null.
    #[schema(max_length = 20, pattern = "^[!-~]{1,20}$")]
    parent_id_tag: Option<String>,
    /// Default null (an empty string is null).
    #[schema(max_length = 255)]
    name: Option<String>,
}

/// The statuses a tag may have (OCPP 1.6 AuthorizationStatus but `ConcurrentTx`).
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the allowed values.
pub enum IdTagStatusName {
    Accepted,
    Blocked,
    Expired,
    Invalid,
}

/// The team's id tags, by uppercase tag, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/id-tags",
    tag = "Teams > Id tags",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the team's tags", body = Page<IdTagBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let owner = TagOwner {
        team_id: team.id,
        path: format!("/api/v3/teams/{}/id-tags", team.uuid),
    };
    list_of(&state, &owner, &query).await
}

/// Whose tags: a team's, or a provider's (kept by a team of its own), and where they are listed.
pub(crate) struct TagOwner {
    pub team_id: i64,
    pub path: String,
}

pub(crate) async fn list_of(
    state: &AppState,
    owner: &TagOwner,
    query: &HashMap<String, String>,
) -> Result<Json<Page<IdTagBody>>, ApiError> {
    let fetch = |limit, offset| state.store.id_tags(owner.team_id, limit, offset);
    page_of(query, &owner.path, fetch, |t| Ok(IdTagBody::from(t))).await
}

pub(crate) async fn create_for(
    state: &AppState,
    team_id: i64,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<IdTagBody>>), ApiError> {
    let fields = read_id_tag(&mut input, None);
    input.finish()?;
    let fields = fields.ok_or_else(|| ApiError::Internal("a valid tag without fields".into()))?;
    let tag = written(state.store.create_id_tag(team_id, &fields).await)?;
    Ok((StatusCode::CREATED, Json(Data::new(tag.into()))))
}

pub(crate) async fn show_for(
    state: &AppState,
    team_id: i64,
    id_tag: &str,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    let tag = state.store.id_tag(team_id, id_tag).await?;
    Ok(Json(Data::new(tag.ok_or_else(not_found_tag)?.into())))
}

pub(crate) async fn replace_for(
    state: &AppState,
    team_id: i64,
    id_tag: &str,
    mut input: Input,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    // The stored form, not the path's: a body without `id_tag` keeps the tag as written.
    let current = state.store.id_tag(team_id, id_tag).await?;
    let current = current.ok_or_else(not_found_tag)?;
    let fields = read_id_tag(&mut input, Some(&current.id_tag));
    input.finish()?;
    let fields = fields.ok_or_else(|| ApiError::Internal("a valid tag without fields".into()))?;
    let tag = written(state.store.replace_id_tag(team_id, id_tag, &fields).await)?;
    Ok(Json(Data::new(tag.ok_or_else(not_found_tag)?.into())))
}

pub(crate) async fn destroy_for(
    state: &AppState,
    team_id: i64,
    id_tag: &str,
) -> Result<Json<EmptyBody>, ApiError> {
    if state.store.delete_id_tag(team_id, id_tag).await? {
        Ok(Json(EmptyBody {}))
    } else {
        Err(not_found_tag())
    }
}

/// Add a tag to a team the caller belongs to.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/id-tags",
    tag = "Teams > Id tags",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = IdTagRequest,
    responses(
        (status = 201, description = "The new tag", body = Data<IdTagBody>),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid, or the team has the tag already (in any case)"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    input: Input,
) -> Result<(StatusCode, Json<Data<IdTagBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    create_for(&state, team.id, input).await
}

/// A write of the store as the API answers it: a tag the team already has (in any case) is 422
/// on `id_tag`.
fn written<T>(result: Result<T, StoreError>) -> Result<T, ApiError> {
    result.map_err(|e| match e {
        StoreError::Conflict(message) => ApiError::invalid("id_tag", message),
        e => e.into(),
    })
}

/// A tag of a team the caller belongs to.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/id-tags/{id_tag}",
    tag = "Teams > Id tags",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    responses(
        (status = 200, body = Data<IdTagBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, id_tag)): Path<(String, String)>,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    show_for(&state, team.id, &id_tag).await
}

/// Replace a tag's fields: those left out take their defaults. The tag itself stays (its case
/// may change); to rename a tag, delete it and create the new one.
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/id-tags/{id_tag}",
    tag = "Teams > Id tags",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    request_body = IdTagRequest,
    responses(
        (status = 200, body = Data<IdTagBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, id_tag)): Path<(String, String)>,
    input: Input,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    replace_for(&state, team.id, &id_tag, input).await
}

/// Delete a tag: answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/id-tags/{id_tag}",
    tag = "Teams > Id tags",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn destroy(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, id_tag)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    destroy_for(&state, team.id, &id_tag).await
}

fn not_found_tag() -> ApiError {
    not_found("Id tag")
}

#[cfg(test)]
mod tests {
    use super::IdTagStatusName;
    use cms_store::id_tags::ID_TAG_STATUSES;

    #[test]
    fn the_documented_statuses_are_the_accepted_ones() {
        let schema = <IdTagStatusName as utoipa::PartialSchema>::schema();
        let schema = serde_json::to_value(schema).expect("a schema serialises");
        assert_eq!(schema["enum"], serde_json::json!(ID_TAG_STATUSES));
    }
}
