//! What the sessions and cdrs lists share: the page a party asks for, read from the query as
//! OCPI writes it, and its objects' costs, priced as the REST API prices a transaction's.

use crate::http::AppState;
use crate::ocpi::reply::OcpiError;
use chrono::Utc;
use cms_ocpi::page::PageQuery;
use cms_store::format_record_time;
use cms_store::ocpi::sessions::{OcpiTransaction, Window};
use cms_store::transaction_readings::TransactionReading;
use serde_json::Value;
use std::collections::HashMap;

/// The query's page (`offset`, `limit`, `date_from`, `date_to`); a bad value is 2001.
pub fn page_query(raw: Option<&str>) -> Result<PageQuery, OcpiError> {
    let query: HashMap<String, String> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .into_owned()
        .collect();
    PageQuery::parse(&query).map_err(OcpiError::invalid)
}

/// The store's window of the page: `date_from`/`date_to` as record times.
pub fn window(page: &PageQuery) -> Window {
    Window {
        from: page.date_from.map(format_record_time),
        to: page.date_to.map(format_record_time),
        offset: i64::try_from(page.offset).unwrap_or(i64::MAX),
        limit: i64::try_from(page.limit).unwrap_or(i64::MAX),
    }
}

/// Each transaction with its cost as `GET /api/v3/chargers/{uuid}/transactions` shows it now
/// (crate::control::pricing), and the readings it was priced from.
pub async fn priced(
    state: &AppState,
    rows: Vec<OcpiTransaction>,
) -> Result<(Vec<(OcpiTransaction, Value)>, Vec<TransactionReading>), OcpiError> {
    let unpriced: Vec<i64> = (rows.iter())
        .map(|t| &t.transaction)
        .filter(|t| t.tariff.is_some() && t.cost.is_none())
        .map(|t| t.id)
        .collect();
    let readings = state.store.transaction_readings(&unpriced).await?;
    let now = Utc::now();
    // Pricing is CPU work: off the async workers, as the REST API's is.
    tokio::task::spawn_blocking(move || {
        let priced = (rows.into_iter())
            .map(|t| {
                let cost = crate::control::pricing::cost_of(&t.transaction, &readings, now);
                (t, cost)
            })
            .collect();
        (priced, readings)
    })
    .await
    .map_err(|e| OcpiError::server(format!("Pricing the sessions failed: {e}")))
}
