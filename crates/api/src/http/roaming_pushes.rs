//! A provider's OCPI pushes (docs/ocpi.md "Delivery"): what cms sent or is sending to the
//! party, newest first, with what came of each; never a push's body (it may carry a driver's
//! token). As the team's providers: any member, with the teams scopes; another team's
//! provider is 404.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::pagination::Page;
use crate::http::team_owned::{owned, page_of};
use axum::Json;
use axum::extract::{Path, Query, State};
use cms_store::ocpi::pushes::PushRecord;
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// One push to a provider's OCPI party.
#[derive(Debug, Serialize, ToSchema)]
pub struct PushBody {
    /// What orders it: pushes of one object go one at a time, oldest first.
    #[schema(example = "location:5f0c1c1e-7c55-4f4f-9d55-4c2f3d1a2b3c")]
    pub object_key: String,
    /// The party's module it goes to (`locations`, `tariffs`, `sessions`, `cdrs`), or `url`
    /// when `path` is a whole address (a command's result).
    #[schema(example = "locations")]
    pub module: String,
    #[schema(example = "PATCH")]
    pub method: String,
    /// After the module's URL, or the whole address for `url`.
    #[schema(example = "/NL/CMS/5f0c1c1e-7c55-4f4f-9d55-4c2f3d1a2b3c")]
    pub path: String,
    /// `pending`, `delivered` or `failed` (every retry spent, or the party cannot take it).
    #[schema(example = "delivered")]
    pub state: String,
    pub attempts: i64,
    /// When it is tried next; null unless pending.
    #[schema(required = true)]
    pub next_attempt_at: Option<String>,
    /// Why the last attempt failed (the party's HTTP status, its OCPI status and message, a
    /// time-out); null after a success.
    #[schema(required = true)]
    pub last_error: Option<String>,
    pub created_at: String,
    #[schema(required = true)]
    pub delivered_at: Option<String>,
}

impl From<PushRecord> for PushBody {
    fn from(p: PushRecord) -> Self {
        PushBody {
            object_key: p.object_key,
            module: p.module,
            method: p.method,
            path: p.path,
            state: p.state,
            attempts: p.attempts,
            next_attempt_at: p.next_attempt_at,
            last_error: p.last_error,
            created_at: p.created_at,
            delivered_at: p.delivered_at,
        }
    }
}

/// The provider's OCPI pushes, newest first, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/ocpi/pushes",
    tag = "Providers",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the provider's pushes", body = Page<PushBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<PushBody>>, ApiError> {
    caller.authorize()?;
    let find = |team_id| state.store.provider(team_id, &provider_uuid);
    let (team, provider) = owned(&state, &caller, &team_uuid, "Provider", find).await?;
    let path = format!(
        "/api/v3/teams/{}/providers/{}/ocpi/pushes",
        team.uuid, provider.uuid
    );
    let fetch = |limit, offset| {
        state
            .store
            .ocpi_pushes_of_provider(provider.id, limit, offset)
    };
    page_of(&query, &path, fetch, |p| Ok(PushBody::from(p))).await
}
