//! A team's e-mobility service providers (the reference names Providers, not their behaviour;
//! docs/tariffs.md "Providers"), and each provider's id tags: the team's sites in `id_tags`
//! mode accept those tags, and the sessions they start are priced with the provider's tariff.
//! As a team's id tags: any member manages them with the teams scopes.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::id_tags::{
    IdTagBody, IdTagRequest, TagOwner, create_for, destroy_for, list_of, replace_for, show_for,
};
use crate::http::input::{Input, Rules};
use crate::http::lookup::not_found;
use crate::http::pagination::Page;
use crate::http::schema::{Data, EmptyBody, ValidationErrorBody};
use crate::http::team_owned::{owned, page_of};
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::providers::{NewProvider, Provider};
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, replace, destroy))
        .routes(routes!(list_tags, create_tag))
        .routes(routes!(show_tag, replace_tag, destroy_tag))
}

/// A provider of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub name: String,
    /// ISO 3166-1 alpha-2, with `party_id` the provider's OCPI party.
    #[schema(example = "NL")]
    pub country_code: String,
    #[schema(example = "EMP")]
    pub party_id: String,
    /// What its drivers pay at the team's sites; null: the site's tariff.
    #[schema(required = true, format = "uuid")]
    pub tariff_uuid: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<Provider> for ProviderBody {
    fn from(p: Provider) -> Self {
        ProviderBody {
            uuid: p.uuid,
            name: p.name,
            country_code: p.country_code,
            party_id: p.party_id,
            tariff_uuid: p.tariff_uuid,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

/// The body of a provider's create and replace.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct ProviderRequest {
    #[schema(max_length = 255)]
    name: String,
    /// Two capital letters.
    #[schema(pattern = "^[A-Z]{2}$")]
    country_code: String,
    /// Three capital letters or digits.
    #[schema(pattern = "^[A-Z0-9]{3}$")]
    party_id: String,
    /// A tariff of the team, or null.
    #[schema(format = "uuid")]
    tariff_uuid: Option<String>,
}

async fn read(
    state: &AppState,
    input: &mut Input,
    team_id: i64,
) -> Result<Option<NewProvider>, ApiError> {
    let name = input.required_string("name", 255.0);
    let mut code = |field: &str, length: usize, digits: bool| {
        let text = input.required_string(field, length as f64)?;
        let ok = text.len() == length
            && text
                .bytes()
                .all(|b| b.is_ascii_uppercase() || (digits && b.is_ascii_digit()));
        if !ok {
            let what = if digits {
                "capital letters or digits"
            } else {
                "capital letters"
            };
            input.fail(
                field,
                format!("The {} must be {length} {what}.", field.replace('_', " ")),
            );
            return None;
        }
        Some(text)
    };
    let country_code = code("country_code", 2, false);
    let party_id = code("party_id", 3, true);
    let tariff_id = match input.string("tariff_uuid", Rules::optional().nullable().max(255.0)) {
        Some(Some(uuid)) => match state.store.tariff(team_id, &uuid).await? {
            Some(tariff) => Some(tariff.id),
            None => {
                input.fail("tariff_uuid", "The selected tariff uuid is invalid.");
                return Ok(None);
            }
        },
        _ => None,
    };
    Ok((|| {
        Some(NewProvider {
            name: name?,
            country_code: country_code?,
            party_id: party_id?,
            tariff_id,
        })
    })())
}

/// The team's providers, oldest first, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the team's providers", body = Page<ProviderBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<ProviderBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let path = format!("/api/v3/teams/{}/providers", team.uuid);
    let fetch = |limit, offset| state.store.providers(team.id, limit, offset);
    page_of(&query, &path, fetch, |p| Ok(ProviderBody::from(p))).await
}

/// Add a provider to a team the caller belongs to.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/providers",
    tag = "Providers",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = ProviderRequest,
    responses(
        (status = 201, description = "The new provider", body = Data<ProviderBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<ProviderBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let new = read(&state, &mut input, team.id).await?;
    input.finish()?;
    let new = new.ok_or_else(|| ApiError::Internal("a valid provider without fields".into()))?;
    let provider = state.store.create_provider(team.id, &new).await?;
    Ok((StatusCode::CREATED, Json(Data::new(provider.into()))))
}

/// The team's provider, for a member of the team.
pub(crate) async fn team_provider(
    state: &AppState,
    caller: &Caller,
    team_uuid: &str,
    provider_uuid: &str,
) -> Result<(i64, Provider), ApiError> {
    let find = |team_id| state.store.provider(team_id, provider_uuid);
    let (team, provider) = owned(state, caller, team_uuid, "Provider", find).await?;
    Ok((team.id, provider))
}

/// A provider of a team the caller belongs to.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, body = Data<ProviderBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
) -> Result<Json<Data<ProviderBody>>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    Ok(Json(Data::new(provider.into())))
}

/// Replace a provider's fields (its tags stay).
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    request_body = ProviderRequest,
    responses(
        (status = 200, body = Data<ProviderBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    mut input: Input,
) -> Result<Json<Data<ProviderBody>>, ApiError> {
    caller.authorize()?;
    let (team_id, _) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    let new = read(&state, &mut input, team_id).await?;
    input.finish()?;
    let new = new.ok_or_else(|| ApiError::Internal("a valid provider without fields".into()))?;
    let provider = state
        .store
        .replace_provider(team_id, &provider_uuid, &new)
        .await?;
    if let Some(p) = &provider {
        super::site_roaming::provider_changed(&state, p.id).await?;
    }
    Ok(Json(Data::new(
        provider.ok_or_else(|| not_found("Provider"))?.into(),
    )))
}

/// Delete a provider with its id tags: its drivers are no longer accepted. Answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn destroy(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    if state.store.delete_provider(team.id, &provider_uuid).await? {
        Ok(Json(EmptyBody {}))
    } else {
        Err(not_found("Provider"))
    }
}

/// The provider's drivers' tags, by uppercase tag, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the provider's tags", body = Page<IdTagBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list_tags(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    let owner = TagOwner {
        team_id: provider.id_tag_team_id,
        path: format!("/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags"),
    };
    list_of(&state, &owner, &query).await
}

/// Add a tag to a provider: the same rules as a team's tags.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    request_body = IdTagRequest,
    responses(
        (status = 201, description = "The new tag", body = Data<IdTagBody>),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid, or the provider has the tag already (in any case)"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    input: Input,
) -> Result<(StatusCode, Json<Data<IdTagBody>>), ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    create_for(&state, provider.id_tag_team_id, input).await
}

/// A tag of a provider.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags/{id_tag}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    responses(
        (status = 200, body = Data<IdTagBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid, id_tag)): Path<(String, String, String)>,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    show_for(&state, provider.id_tag_team_id, &id_tag).await
}

/// Replace a provider's tag's fields, as a team's.
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags/{id_tag}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    request_body = IdTagRequest,
    responses(
        (status = 200, body = Data<IdTagBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn replace_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid, id_tag)): Path<(String, String, String)>,
    input: Input,
) -> Result<Json<Data<IdTagBody>>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    replace_for(&state, provider.id_tag_team_id, &id_tag, input).await
}

/// Delete a provider's tag: answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/id-tags/{id_tag}",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
        ("id_tag" = String, Path, description = "The tag, in any case"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn destroy_tag(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid, id_tag)): Path<(String, String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    destroy_for(&state, provider.id_tag_team_id, &id_tag).await
}
