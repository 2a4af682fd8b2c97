//! The cdrs module, CPO SENDER (docs/ocpi.md "Sessions and CDRs"): a party's CDRs, one for each
//! of its sessions that stopped and was priced, by last update.

use super::auth::{BaseUrl, Registered};
use super::reply::{self, OcpiError};
use super::sessions::page;
use crate::http::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use cms_roaming::translate::sessions::objects;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/2.2.1/cdrs", get(list))
        .route("/2.2.1/cdrs/", get(list))
}

/// `GET /ocpi/2.2.1/cdrs?date_from&date_to&offset&limit`.
async fn list(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    RawQuery(query): RawQuery,
) -> Result<Response, OcpiError> {
    let page = page::page_query(query.as_deref())?;
    let (rows, total) = (state.store)
        .ocpi_cdrs(party.provider_id, &page::window(&page))
        .await?;
    let (priced, _) = page::priced(&state, rows).await?;
    // Every row is a CDR (stopped, priced or without a tariff): none is left out of the page.
    let cdrs: Vec<_> = (priced.iter())
        .filter_map(|(t, cost)| objects::cdr(t, cost))
        .collect();
    let url = format!("{base}/ocpi/{}/cdrs", cms_ocpi::VERSION);
    Ok(reply::page(&page, &url, total.max(0) as u64, cdrs))
}
