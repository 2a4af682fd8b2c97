//! What a team owns (its providers, tariffs and id tags): any member lists and looks it up the
//! same way, so that a team the caller does not belong to, or a row the team does not have, is
//! the same 404 everywhere, and every listing pages alike.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::not_found;
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::teams::member_team;
use axum::Json;
use cms_store::StoreError;
use cms_store::teams::Team;
use std::collections::HashMap;
use std::future::Future;

/// The `?page=` page of a listing at `path`, each row answered as `body` shows it: 422 for a
/// page that is not a positive integer.
pub(crate) async fn page_of<R, B, Fut>(
    query: &HashMap<String, String>,
    path: &str,
    fetch: impl FnOnce(i64, i64) -> Fut,
    body: impl Fn(R) -> Result<B, ApiError>,
) -> Result<Json<Page<B>>, ApiError>
where
    Fut: Future<Output = Result<(Vec<R>, i64), StoreError>>,
{
    let page = page_number(query.get("page").map(String::as_str))?;
    let (rows, total) = fetch(PER_PAGE, page_offset(page)).await?;
    let data = rows.into_iter().map(body).collect::<Result<_, _>>()?;
    Ok(Json(Page::new(path, page, total, data)))
}

/// The team `team_uuid` of the caller's, and its `thing` that `find` looks up by the team's
/// id: 404 `"Team not found."` when the caller is not a member, 404 `"<thing> not found."`
/// when the team has no such row.
pub(crate) async fn owned<T, Fut>(
    state: &AppState,
    caller: &Caller,
    team_uuid: &str,
    thing: &str,
    find: impl FnOnce(i64) -> Fut,
) -> Result<(Team, T), ApiError>
where
    Fut: Future<Output = Result<Option<T>, StoreError>>,
{
    let team = member_team(state, caller, team_uuid).await?;
    let row = find(team.id).await?.ok_or_else(|| not_found(thing))?;
    Ok((team, row))
}
