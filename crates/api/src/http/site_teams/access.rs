//! What teams may do with a site: list and show access, remove it, grant, revoke and request
//! sensitive data, limit assets, and transfer ownership.

use super::{AssetRequest, TeamAccessBody, read_assets, read_expiry};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{not_found, owned_site, visible_site};
use crate::http::schema::{Data, EmptyBody, ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_store::sites::TeamAccess;
use utoipa::ToSchema;

/// Grant sensitive data, until a date or for good.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SensitiveAccessRequest {
    /// `YYYY-MM-DD`, after today: access ends at the start of that day (UTC). Absent or null:
    /// no end.
    #[schema(format = Date)]
    expires_at: Option<String>,
}

/// Which of the site's chargers the team reaches.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct AssetsRequest {
    can_access_all_assets: bool,
    /// Required when `can_access_all_assets` is false; null entries are ignored.
    accessible_assets: Option<Vec<Option<AssetRequest>>>,
}

pub(super) type AccessAnswer = Result<Json<Data<TeamAccessBody>>, ApiError>;

fn team_not_found() -> ApiError {
    not_found("Team")
}

/// A guest team's access to a site the caller's team owns: 404 if the team has none, 422 on
/// `team_uuid` with `owner_message` for the owner team itself.
async fn guest_access(
    state: &AppState,
    caller: &Caller,
    site_uuid: &str,
    team_uuid: &str,
    owner_message: &str,
) -> Result<(i64, TeamAccess), ApiError> {
    let site_id = owned_site(state, caller, site_uuid).await?;
    let access = state.store.site_team(site_id, team_uuid).await?;
    let access = access.ok_or_else(team_not_found)?;
    if access.is_owner() {
        return Err(ApiError::invalid("team_uuid", owner_message));
    }
    Ok((site_id, access))
}

/// The team's access as it now is.
pub(super) async fn current(state: &AppState, site_id: i64, team_uuid: &str) -> AccessAnswer {
    let access = state.store.site_team(site_id, team_uuid).await?;
    let access = access.ok_or_else(team_not_found)?;
    Ok(Json(Data::new(access.into())))
}

/// The teams the caller may know of: all for the owner team, else the owner and its own.
async fn known_teams(
    state: &AppState,
    caller: &Caller,
    site_uuid: &str,
) -> Result<Vec<TeamAccess>, ApiError> {
    let (site_id, permissions) = visible_site(state, caller, site_uuid).await?;
    let member = (!permissions.full).then(|| caller.user_id());
    Ok(state.store.site_teams(site_id, member).await?)
}

/// List the teams with access to a site, the owner first.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/teams",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path)),
    responses(
        (status = 200, body = Data<Vec<TeamAccessBody>>),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<Data<Vec<TeamAccessBody>>>, ApiError> {
    caller.authorize()?;
    let teams = known_teams(&state, &caller, &site_uuid).await?;
    Ok(Json(Data::new(teams.into_iter().map(Into::into).collect())))
}

/// Show one team's access to a site.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path)),
    responses(
        (status = 200, body = Data<TeamAccessBody>),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
) -> AccessAnswer {
    caller.authorize()?;
    let teams = known_teams(&state, &caller, &site_uuid).await?;
    let access = teams
        .into_iter()
        .find(|access| access.team.uuid == team_uuid);
    Ok(Json(Data::new(access.ok_or_else(team_not_found)?.into())))
}

/// Remove a guest team's access to a site. Only the owner team may; its own access stays.
#[utoipa::path(
    delete,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path)),
    responses(
        (status = 200, description = "Removed", body = EmptyBody),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
        (status = 422, body = ValidationErrorBody, description = "The owner team"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let owner = "The owner team's access cannot be removed.";
    let (site_id, access) = guest_access(&state, &caller, &site_uuid, &team_uuid, owner).await?;
    state
        .store
        .remove_site_access(site_id, access.team.id)
        .await?;
    Ok(Json(EmptyBody {}))
}

const OWNER_SEES_SENSITIVE: &str = "The owner team always has access to sensitive data.";

/// Let a guest team see the site's sensitive data, until a date or for good; this answers its
/// request, if any. Only the owner team may.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path)),
    request_body = SensitiveAccessRequest,
    responses(
        (status = 200, body = Data<TeamAccessBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn grant_sensitive(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
    mut input: Input,
) -> AccessAnswer {
    caller.authorize()?;
    let owner = OWNER_SEES_SENSITIVE;
    let (site_id, access) = guest_access(&state, &caller, &site_uuid, &team_uuid, owner).await?;
    let expires_at = read_expiry(&mut input, "expires_at").flatten();
    input.finish()?;
    let (team_id, expires_at) = (access.team.id, expires_at.as_deref());
    state
        .store
        .grant_sensitive_data(site_id, team_id, expires_at)
        .await?;
    current(&state, site_id, &team_uuid).await
}

/// Take sensitive data from a guest team. Only the owner team may.
#[utoipa::path(
    delete,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path)),
    responses(
        (status = 200, body = Data<TeamAccessBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
        (status = 422, body = ValidationErrorBody, description = "The owner team"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn revoke_sensitive(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
) -> AccessAnswer {
    caller.authorize()?;
    let owner = OWNER_SEES_SENSITIVE;
    let (site_id, access) = guest_access(&state, &caller, &site_uuid, &team_uuid, owner).await?;
    state
        .store
        .revoke_sensitive_data(site_id, access.team.id)
        .await?;
    current(&state, site_id, &team_uuid).await
}

/// Ask the owner team for sensitive data, for a guest team the caller belongs to: records
/// `sensitive_data_requested_at`, until the owner grants it.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access/request",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path, description = "A guest team the caller belongs to")),
    responses(
        (status = 200, body = Data<TeamAccessBody>),
        (status = 404, body = ErrorBody, description = "Not a site the caller sees, or not a team with access to the site, or not a team of the caller"),
        (status = 422, body = ValidationErrorBody, description = "The owner team"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn request_sensitive(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
) -> AccessAnswer {
    caller.authorize()?;
    let (site_id, _) = visible_site(&state, &caller, &site_uuid).await?;
    let team = state
        .store
        .acting_team(caller.user_id(), Some(&team_uuid))
        .await?
        .ok_or_else(team_not_found)?;
    let access = state.store.site_team(site_id, &team_uuid).await?;
    if access.ok_or_else(team_not_found)?.is_owner() {
        return Err(ApiError::invalid("team_uuid", OWNER_SEES_SENSITIVE));
    }
    state.store.request_sensitive_data(site_id, team.id).await?;
    current(&state, site_id, &team_uuid).await
}

/// Set which of the site's chargers a guest team reaches: all, or the listed ones. Only the
/// owner team may.
#[utoipa::path(
    put,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}/assets",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path)),
    request_body = AssetsRequest,
    responses(
        (status = 200, body = Data<TeamAccessBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn update_assets(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
    mut input: Input,
) -> AccessAnswer {
    caller.authorize()?;
    let owner = "The owner team has access to every asset.";
    let (site_id, access) = guest_access(&state, &caller, &site_uuid, &team_uuid, owner).await?;
    let chargers = state.store.site_charger_ids(site_id).await?;
    let assets = read_assets(&mut input, Rules::required(), &chargers);
    input.finish()?;
    let Some(assets) = assets else {
        return Err(ApiError::Internal("valid assets were not read".into()));
    };
    state
        .store
        .set_site_assets(site_id, access.team.id, &assets)
        .await?;
    current(&state, site_id, &team_uuid).await
}

/// Make a guest team the site's owner. The old owner team stays as a guest with sensitive
/// data and every asset. Only the owner team may.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/teams/{team_uuid}/transfer-ownership",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path), ("team_uuid" = String, Path, description = "A guest team of the site")),
    responses(
        (status = 200, description = "The new owner's access", body = Data<TeamAccessBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
        (status = 422, body = ValidationErrorBody, description = "The team already owns the site"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn transfer_ownership(
    State(state): State<AppState>,
    caller: Caller,
    Path((site_uuid, team_uuid)): Path<(String, String)>,
) -> AccessAnswer {
    caller.authorize()?;
    let owner = "The team already owns the site.";
    let (site_id, access) = guest_access(&state, &caller, &site_uuid, &team_uuid, owner).await?;
    state.store.transfer_site(site_id, access.team.id).await?;
    current(&state, site_id, &team_uuid).await
}
