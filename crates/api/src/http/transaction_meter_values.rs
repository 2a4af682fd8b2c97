//! One transaction of a charger, and its energy over time (the console's session page): the
//! readings a priced transaction keeps, one a minute (cms_store::transaction_readings), between
//! its start and stop readings, with the mean power between each two of them.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{charger_with_sensitive_data, not_found, path_number};
use crate::http::schema::{Data, ErrorBody};
use crate::http::transactions::{TransactionBody, transaction};
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::{DateTime, Utc};
use cms_store::ChargerRow;
use cms_store::transaction_readings::KEPT_DAYS;
use cms_store::transaction_readings::TransactionReading;
use cms_store::transactions::TransactionRow;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show))
        .routes(routes!(meter_values))
}

/// Every minute a transaction keeps (`KEPT_DAYS` days of them), and its start and stop.
const MAX_LIMIT: i64 = KEPT_DAYS * 1_440 + 2;
/// One day of minutes, and the start and stop.
const DEFAULT_LIMIT: i64 = 1_442;

/// A reading of the transaction's energy register.
#[derive(Serialize, ToSchema)]
pub struct MeterValueBody {
    /// When the charger took it (the record time).
    at: String,
    /// Wh, the register.
    energy_wh: i64,
    /// Wh charged since the start (the register less `meter_start`).
    energy_charged_wh: i64,
    /// W, the mean power since the reading before; null for the first one.
    #[schema(required = true)]
    power_w: Option<f64>,
}

/// One of a charger's transactions, as its list shows it (with its cost).
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/transactions/{transaction_id}",
    tag = "Transactions",
    params(
        ("charger_uuid" = String, Path),
        ("transaction_id" = i64, Path, description = "The transaction's `id`, as listed"),
    ),
    responses(
        (status = 200, body = Data<TransactionBody>),
        (status = 403, body = ErrorBody,
            description = "The token lacks transactions:read, or the caller lacks sensitive access"),
    ),
    security(("bearer" = ["transactions:read"]), ("oauth2" = ["transactions:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, transaction_id)): Path<(String, String)>,
) -> Result<Json<Data<TransactionBody>>, ApiError> {
    caller.authorize()?;
    let (charger, row) = find(&state, &caller, &charger_uuid, &transaction_id).await?;
    let readings = match row.tariff.is_some() && row.cost.is_none() {
        true => state.store.transaction_readings(&[row.id]).await?,
        false => Vec::new(),
    };
    let now = Utc::now();
    let body = tokio::task::spawn_blocking(move || {
        let cost = crate::control::pricing::cost_of(&row, &readings, now);
        transaction(row, &charger, cost)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("pricing the transaction: {e}")))?;
    Ok(Json(Data::new(body)))
}

/// A transaction's energy register over time, oldest first: its start reading, the readings
/// it kept (a priced transaction keeps a minute's earliest; an unpriced one keeps none), and
/// its stop reading once stopped. At most `limit`, the newest.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/transactions/{transaction_id}/meter-values",
    tag = "Transactions",
    params(
        ("charger_uuid" = String, Path),
        ("transaction_id" = i64, Path, description = "The transaction's `id`, as listed"),
        ("limit" = Option<i64>, Query, description = "1 to 46082 (default 1442): the newest readings"),
    ),
    responses(
        (status = 200, description = "Oldest first", body = Data<Vec<MeterValueBody>>),
        (status = 403, body = ErrorBody,
            description = "The token lacks transactions:read, or the caller lacks sensitive access"),
    ),
    security(("bearer" = ["transactions:read"]), ("oauth2" = ["transactions:read"]))
)]
pub async fn meter_values(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, transaction_id)): Path<(String, String)>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Data<Vec<MeterValueBody>>>, ApiError> {
    caller.authorize()?;
    let mut input = Input::from_query(query);
    let limit = input
        .integer(
            "limit",
            Rules::optional().nullable().between(1.0, MAX_LIMIT as f64),
        )
        .flatten()
        .unwrap_or(DEFAULT_LIMIT);
    input.finish()?;
    let (_, row) = find(&state, &caller, &charger_uuid, &transaction_id).await?;
    let readings = state.store.transaction_readings(&[row.id]).await?;
    let mut points = register_over_time(&row, &readings);
    let newest = points
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(usize::MAX));
    points.drain(..newest);
    Ok(Json(Data::new(points)))
}

/// The charger (with sensitive access: id tags and readings) and its transaction.
async fn find(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
    transaction_id: &str,
) -> Result<(ChargerRow, TransactionRow), ApiError> {
    let charger = charger_with_sensitive_data(state, caller, charger_uuid).await?;
    let id: i64 = path_number(transaction_id, "Transaction")?;
    let row = state.store.transaction_of_charger(charger.id, id).await?;
    Ok((charger, row.ok_or_else(|| not_found("Transaction"))?))
}

/// The start reading, the kept ones after it, and the stop reading: by time, each with the
/// mean power since the one before.
fn register_over_time(t: &TransactionRow, kept: &[TransactionReading]) -> Vec<MeterValueBody> {
    let mut readings: Vec<(&str, i64)> = vec![(t.started_at.as_str(), t.meter_start)];
    readings.extend(kept.iter().filter_map(|r| {
        let at = r.energy_at.as_deref()?;
        (at > t.started_at.as_str()).then_some((at, r.energy_wh?))
    }));
    if let (Some(at), Some(wh)) = (t.stopped_at.as_deref(), t.meter_stop) {
        readings.retain(|(kept_at, _)| *kept_at < at);
        readings.push((at, wh));
    }
    readings.sort_by(|a, b| a.0.cmp(b.0));
    let mut before: Option<(DateTime<Utc>, i64)> = None;
    readings
        .into_iter()
        .map(|(at, wh)| {
            let time = DateTime::parse_from_rfc3339(at).ok().map(|t| t.to_utc());
            let power_w = match (before, time) {
                (Some((then, wh_then)), Some(now)) if now > then => {
                    let hours = (now - then).num_milliseconds() as f64 / 3_600_000.0;
                    Some(((wh - wh_then) as f64 / hours * 10.0).round() / 10.0)
                }
                _ => None,
            };
            if let Some(time) = time {
                before = Some((time, wh));
            }
            MeterValueBody {
                at: at.to_string(),
                energy_wh: wh,
                energy_charged_wh: wh - t.meter_start,
                power_w,
            }
        })
        .collect()
}
