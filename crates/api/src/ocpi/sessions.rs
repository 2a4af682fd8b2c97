//! The sessions module, CPO SENDER (docs/ocpi.md "Sessions and CDRs"): a party's sessions (its
//! provider's drivers' transactions at the team's sites), running and finished, by last update;
//! and charging preferences, which cms does not take (NOT_POSSIBLE).

pub(super) mod page;

use super::auth::{BaseUrl, Registered};
use super::reply::{self, OcpiError};
use crate::http::AppState;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, put};
use cms_ocpi::sessions::{ChargingPreferences, ChargingPreferencesResponse};
use cms_roaming::translate::sessions::objects;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/2.2.1/sessions", get(list))
        .route("/2.2.1/sessions/", get(list))
        .route(
            "/2.2.1/sessions/{session_id}/charging_preferences",
            put(preferences),
        )
}

/// `GET /ocpi/2.2.1/sessions?date_from&date_to&offset&limit`: the party's sessions last updated
/// in the window, oldest first, each with its energy and cost so far.
async fn list(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    RawQuery(query): RawQuery,
) -> Result<Response, OcpiError> {
    let page = page::page_query(query.as_deref())?;
    let (rows, total) = (state.store)
        .ocpi_sessions(party.provider_id, &page::window(&page))
        .await?;
    let (priced, readings) = page::priced(&state, rows).await?;
    let sessions: Vec<_> = (priced.iter())
        .map(|(t, cost)| objects::session(t, cost, &readings))
        .collect();
    let url = format!("{base}/ocpi/{}/sessions", cms_ocpi::VERSION);
    Ok(reply::page(&page, &url, total.max(0) as u64, sessions))
}

/// `PUT /ocpi/2.2.1/sessions/{session_id}/charging_preferences`: cms does not steer a session
/// by its driver's preferences, so any it is sent are NOT_POSSIBLE; another party's session, or
/// none, is 404.
async fn preferences(
    State(state): State<AppState>,
    Registered(party): Registered,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Result<Response, OcpiError> {
    let session = state
        .store
        .ocpi_session(party.provider_id, &session_id)
        .await?;
    if session.is_none() {
        return Err(OcpiError::not_found("Unknown session."));
    }
    let _: ChargingPreferences = reply::body(&body)?;
    Ok(reply::ok(ChargingPreferencesResponse::NotPossible))
}
