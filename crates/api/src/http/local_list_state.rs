//! A charger's local authorization list as cms keeps it (docs/actions.md, "Local authorisation
//! lists"): whether it is kept, the version and entries the charger holds, and whether that is
//! what it should hold now. Read from the list keeper's own state, no call to the charger.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::{not_found, visible_charger};
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_store::local_lists::{fit, next_update};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

#[derive(Serialize, ToSchema)]
pub struct LocalListBody {
    #[schema(format = "uuid")]
    charger_uuid: String,
    identity: String,
    /// Its site checks id tags and has cms keep its chargers' lists.
    kept: bool,
    /// `not_kept` (the site keeps no lists), `unsupported` (the charger said on this
    /// connection that it keeps none), `updating` (a call about the list is in flight),
    /// `in_sync` (it holds what it should), or `out_of_date` (an update is owed: it is
    /// offline, its version is not checked yet, or the keeper waits to retry).
    state: String,
    /// The list version the charger last accepted (0: none yet).
    version: i64,
    /// How many entries it holds since.
    entries: usize,
    /// How many it should hold now (the tags that apply, within its LocalAuthListMaxLength).
    desired_entries: usize,
    online: bool,
    /// Its list version was checked (GetLocalListVersion) on its current connection.
    checked: bool,
}

/// A charger's local-list sync state. The list's entries are not shown (they are id tags:
/// the team's id-tags list has them); a caller who sees the charger reads this.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/local-list",
    tag = "Chargers",
    params(("charger_uuid" = String, Path)),
    responses(
        (status = 200, body = Data<LocalListBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<LocalListBody>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let store = &state.store;
    let list = (store.local_list_charger(charger.id).await?).ok_or_else(|| not_found("Charger"))?;
    let held = &list.held;
    let (desired, limits) = match list.keeps_list {
        true => (
            store
                .desired_local_list(charger.id, chrono::Utc::now())
                .await?,
            store.local_list_limits(charger.id).await?,
        ),
        false => (Vec::new(), Default::default()),
    };
    let (desired, _) = fit(desired, limits.max_entries);
    let session = list.session.as_ref();
    let owed = || next_update(&held.entries, held.version, held.needs_full, &desired, None);
    let state = if !list.keeps_list {
        "not_kept"
    } else if session.is_some() && held.unsupported_session.as_ref() == session {
        "unsupported"
    } else if held.pending_action.is_some() {
        "updating"
    } else if held.version > 0 && owed().is_none() {
        "in_sync"
    } else {
        "out_of_date"
    };
    Ok(Json(Data::new(LocalListBody {
        charger_uuid: charger.uuid.clone(),
        identity: charger.identity.clone(),
        kept: list.keeps_list,
        state: state.into(),
        version: held.version,
        entries: held.entries.len(),
        desired_entries: desired.len(),
        online: session.is_some(),
        checked: session.is_some() && held.checked_session.as_ref() == session,
    })))
}
