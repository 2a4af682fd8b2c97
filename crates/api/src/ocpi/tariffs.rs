//! The tariffs module, CPO SENDER (2.2.1 "Tariffs"): the tariffs that price the calling
//! party's drivers at the sites published to its provider (its provider's own tariff, else
//! each site's), a page at a time, in the team's CPO identity.

use super::auth::{BaseUrl, Registered};
use super::locations::{bounds, page_query};
use super::reply::{self, OcpiError};
use crate::http::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::get;

pub fn routes() -> Router<AppState> {
    Router::new().route("/2.2.1/tariffs", get(list))
}

/// `GET /ocpi/2.2.1/tariffs`.
async fn list(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    RawQuery(query): RawQuery,
) -> Result<Response, OcpiError> {
    let (page, window) = page_query(query)?;
    let (limit, offset) = bounds(&page);
    let url = format!("{base}/ocpi/2.2.1/tariffs");
    let Some(cpo) = state.store.ocpi_cpo(party.team_id).await? else {
        // No identity, nothing published (a site is published under it).
        return Ok(reply::page(&page, &url, 0, Vec::<()>::new()));
    };
    let (facts, total) = (state.store)
        .ocpi_tariffs(party.provider_id, window, limit, offset)
        .await?;
    let tariffs: Vec<_> = (facts.iter())
        .map(|t| cms_ocpi::tariffs::tariff(&cpo.country_code, &cpo.party_id, t))
        .collect();
    Ok(reply::page(&page, &url, total.max(0) as u64, tariffs))
}
