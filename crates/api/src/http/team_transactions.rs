//! A team's transactions across the chargers of the sites it sees (the console's sessions
//! list): `GET /api/v3/teams/{team_uuid}/transactions`, paginated like the other lists, and
//! `.../transactions.csv`, every matching row as CSV ([`csv`]). Only a member of the team reads
//! them (else 404, as for the team's other resources), and only at chargers whose sensitive
//! data the team reads (cms_store::transactions::TeamTransaction).

mod csv;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::Rules;
use crate::http::pagination::{PER_PAGE, Page, filters_query, page_number, page_offset};
use crate::http::teams::member_team;
use crate::http::transactions::{
    TransactionBody, TransactionCharger, filter_input, query_input, status_filter, time,
    transaction_at,
};
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::Utc;
use cms_store::transactions::{TeamTransaction, TransactionFilter};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(csv::export))
}

const FILTER_KEYS: [&str; 4] = ["status", "charger_uuid", "from", "to"];

/// A transaction as the per-charger list gives it, with the charger it was at.
#[derive(Serialize, ToSchema)]
pub struct TeamTransactionBody {
    #[serde(flatten)]
    transaction: TransactionBody,
    #[schema(format = "uuid")]
    charger_uuid: String,
    charger_identity: String,
}

/// What a team's listing is narrowed to.
pub(crate) struct TeamFilter {
    pub(crate) transactions: TransactionFilter,
    pub(crate) charger_uuid: Option<String>,
}

/// List a team's transactions, newest start first.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/transactions",
    tag = "Transactions",
    params(
        ("team_uuid" = String, Path),
        ("page" = Option<i64>, Query, description = "From 1; 25 a page"),
        ("filter[status]" = Option<String>, Query, description = "`active` or `stopped`"),
        ("filter[charger_uuid]" = Option<String>, Query, description = "Only this charger's"),
        ("filter[from]" = Option<String>, Query, description = "Started at or after (RFC 3339, or a date)"),
        ("filter[to]" = Option<String>, Query, description = "Started before (RFC 3339, or a date)"),
    ),
    responses(
        (status = 200, description = "Newest first", body = Page<TeamTransactionBody>),
    ),
    security(("bearer" = ["transactions:read"]), ("oauth2" = ["transactions:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Page<TeamTransactionBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let page = page_number(
        query
            .iter()
            .find(|(key, _)| key == "page")
            .map(|(_, value)| value.as_str()),
    )?;
    let filters = filters_query(&query);
    let filter = read_filter(query)?;
    let (rows, total) = state
        .store
        .team_transactions(
            team.id,
            &filter.transactions,
            filter.charger_uuid.as_deref(),
            PER_PAGE,
            page_offset(page),
        )
        .await?;
    let data = priced(&state, rows).await?;
    let path = format!("/api/v3/teams/{team_uuid}/transactions");
    Ok(Json(Page::filtered(&path, &filters, page, total, data)))
}

/// The bodies of `rows`, each with its cost (the running cost of one still charging).
pub(crate) async fn priced(
    state: &AppState,
    rows: Vec<TeamTransaction>,
) -> Result<Vec<TeamTransactionBody>, ApiError> {
    let unpriced: Vec<i64> = rows
        .iter()
        .map(|row| &row.transaction)
        .filter(|t| t.tariff.is_some() && t.cost.is_none())
        .map(|t| t.id)
        .collect();
    let readings = state.store.transaction_readings(&unpriced).await?;
    let now = Utc::now();
    // Pricing is CPU work: off the async workers.
    tokio::task::spawn_blocking(move || {
        rows.into_iter()
            .map(|row| {
                let cost = crate::control::pricing::cost_of(&row.transaction, &readings, now);
                let charger = TransactionCharger {
                    uuid: row.charger_uuid.clone(),
                    identity: row.charger_identity.clone(),
                    reference: row.charger_reference,
                };
                TeamTransactionBody {
                    transaction: transaction_at(row.transaction, charger, cost),
                    charger_uuid: row.charger_uuid,
                    charger_identity: row.charger_identity,
                }
            })
            .collect()
    })
    .await
    .map_err(|e| ApiError::Internal(format!("pricing the transactions: {e}")))
}

/// The `filter[...]` parameters (or `filter={...}`); a bad one is the reference's 422 under
/// `filter.<key>`. Other parameters than `page` and `filter` are ignored, as the other lists do.
pub(crate) fn read_filter(query: Vec<(String, String)>) -> Result<TeamFilter, ApiError> {
    let mut input = query_input(query);
    let fields = input
        .object("filter", Rules::optional().nullable())
        .flatten()
        .unwrap_or_default();
    let mut nested = filter_input(fields, &FILTER_KEYS);
    let optional = Rules::optional().nullable();
    let status = status_filter(&mut nested);
    let charger_uuid = nested
        .string("filter.charger_uuid", optional.max(36.0))
        .flatten()
        .map(|uuid| uuid.to_ascii_lowercase());
    let transactions = TransactionFilter {
        status,
        started_after: time(&mut nested, "filter.from"),
        started_before: time(&mut nested, "filter.to"),
        ..TransactionFilter::default()
    };
    input.finish()?;
    nested.finish()?;
    Ok(TeamFilter {
        transactions,
        charger_uuid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_filter_reads_bracketed_keys_and_refuses_bad_ones() {
        let filter = read_filter(pairs(&[
            ("filter[status]", "stopped"),
            ("filter[charger_uuid]", "ABC"),
            ("filter[from]", "2026-02-10T10:00:00+01:00"),
            ("page", "2"),
        ]))
        .unwrap();
        assert_eq!(
            filter.transactions.status,
            Some(cms_store::transactions::TransactionStatus::Stopped)
        );
        assert_eq!(filter.charger_uuid.as_deref(), Some("abc"));
        assert_eq!(
            filter.transactions.started_after.as_deref(),
            Some("2026-02-10T09:00:00.000000Z")
        );
        let Err(ApiError::Validation(errors)) = read_filter(pairs(&[
            ("filter[status]", "paused"),
            ("filter[to]", "tomorrow"),
            ("filter[id_tag]", "x"),
        ])) else {
            panic!("a bad filter is refused");
        };
        for field in ["filter.status", "filter.to", "filter.id_tag"] {
            assert!(errors.contains_key(field), "{field}: {errors:?}");
        }
    }
}
