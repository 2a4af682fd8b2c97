//! The locations module, CPO SENDER (2.2.1 "Locations"): the sites published to the calling
//! party's provider as Locations, a page at a time (`offset`, `limit`, `date_from`, `date_to`
//! on `last_updated`), and one Location, EVSE or Connector. Any other site is unknown (2003),
//! an EVSE or connector the Location does not hold is 2000: never another party's object.

use super::auth::{BaseUrl, Registered};
use super::reply::{self, OcpiError};
use crate::http::AppState;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use cms_ocpi::locations::{Evse, LocationFacts, location};
use cms_ocpi::page::PageQuery;
use cms_store::ocpi::locations::Window;
use std::collections::HashMap;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/2.2.1/locations", get(list))
        .route("/2.2.1/locations/{location_id}", get(one))
        .route("/2.2.1/locations/{location_id}/{evse_uid}", get(evse))
        .route(
            "/2.2.1/locations/{location_id}/{evse_uid}/{connector_id}",
            get(connector),
        )
}

/// A list request's paging, checked (2001 naming a bad parameter), with its date window.
pub(super) fn page_query(query: Option<String>) -> Result<(PageQuery, Window), OcpiError> {
    let pairs: HashMap<String, String> =
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let page = PageQuery::parse(&pairs).map_err(OcpiError::invalid)?;
    let window = Window {
        from: page.date_from,
        to: page.date_to,
    };
    Ok((page, window))
}

/// The store's limit and offset of a page (an offset past any count reads nothing).
pub(super) fn bounds(page: &PageQuery) -> (i64, i64) {
    let limit = i64::try_from(page.limit).unwrap_or(i64::MAX);
    (limit, i64::try_from(page.offset).unwrap_or(i64::MAX))
}

/// `GET /ocpi/2.2.1/locations`.
async fn list(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    RawQuery(query): RawQuery,
) -> Result<Response, OcpiError> {
    let (page, window) = page_query(query)?;
    let (limit, offset) = bounds(&page);
    let (facts, total) = (state.store)
        .ocpi_locations(party.provider_id, window, limit, offset)
        .await?;
    let locations: Vec<_> = facts.iter().map(location).collect();
    let url = format!("{base}/ocpi/2.2.1/locations");
    Ok(reply::page(&page, &url, total.max(0) as u64, locations))
}

/// The party's Location `location_id`, or 2003.
async fn published(
    state: &AppState,
    provider_id: i64,
    location_id: &str,
) -> Result<LocationFacts, OcpiError> {
    (state.store.ocpi_location(provider_id, location_id).await?)
        .ok_or_else(OcpiError::unknown_location)
}

/// The EVSE `evse_uid` of the Location, or 2000.
fn evse_of(facts: &LocationFacts, evse_uid: &str) -> Result<Evse, OcpiError> {
    let found = location(facts)
        .evses
        .into_iter()
        .find(|e| e.uid == evse_uid);
    found.ok_or_else(|| OcpiError::not_found("Unknown EVSE."))
}

/// `GET /ocpi/2.2.1/locations/{location_id}`.
async fn one(
    State(state): State<AppState>,
    Registered(party): Registered,
    Path(location_id): Path<String>,
) -> Result<Response, OcpiError> {
    let facts = published(&state, party.provider_id, &location_id).await?;
    Ok(reply::ok(location(&facts)))
}

/// `GET /ocpi/2.2.1/locations/{location_id}/{evse_uid}`.
async fn evse(
    State(state): State<AppState>,
    Registered(party): Registered,
    Path((location_id, evse_uid)): Path<(String, String)>,
) -> Result<Response, OcpiError> {
    let facts = published(&state, party.provider_id, &location_id).await?;
    Ok(reply::ok(evse_of(&facts, &evse_uid)?))
}

/// `GET /ocpi/2.2.1/locations/{location_id}/{evse_uid}/{connector_id}`.
async fn connector(
    State(state): State<AppState>,
    Registered(party): Registered,
    Path((location_id, evse_uid, connector_id)): Path<(String, String, String)>,
) -> Result<Response, OcpiError> {
    let facts = published(&state, party.provider_id, &location_id).await?;
    let evse = evse_of(&facts, &evse_uid)?;
    let found = evse.connectors.into_iter().find(|c| c.id == connector_id);
    Ok(reply::ok(found.ok_or_else(|| {
        OcpiError::not_found("Unknown connector.")
    })?))
}
