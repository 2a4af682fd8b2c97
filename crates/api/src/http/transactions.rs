//! A charger's transactions (endpoint 5): newest first, at most `limit`, narrowed by `filter`.
//!
//! Both may come in the GET's JSON body or in the query string (the body wins per field):
//! `?limit=5&filter={"status":"stopped"}` or `?limit=5&filter[status]=stopped`. A transaction's
//! `id` is the transactionId a 1.6 charger was given, the number its own logs show; a 2.0.1
//! station names its transactions itself (`station_transaction_id`, a string), and their `id`
//! is cms's own number for them.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules, attribute};
use crate::http::lookup::charger_with_sensitive_data;
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use chrono::{DateTime, NaiveDate, Utc};
use cms_store::transactions::{TransactionFilter, TransactionRow, TransactionStatus};
use cms_store::{ChargerRow, format_record_time};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// How many transactions a list holds when the request names no `limit`.
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: f64 = 10_000.0;
const FILTER_KEYS: [&str; 5] = [
    "status",
    "connector_id",
    "id_tag",
    "started_after",
    "started_before",
];

/// The request (GET body or query string).
#[derive(ToSchema)]
#[allow(dead_code)] // documents the request; it is read through `Input`
pub struct TransactionsRequest {
    /// 1 to 10000; absent or null: 100.
    limit: Option<i64>,
    filter: Option<TransactionsFilterBody>,
}

/// Every key optional; all given ones must hold. Other keys are a 422.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TransactionsFilterBody {
    /// `active` (not stopped yet) or `stopped`.
    status: Option<String>,
    /// The connector's number on its charger, from 1.
    connector_id: Option<i64>,
    /// Compared case-insensitively, as OCPP compares id tags. At most 20 characters.
    id_tag: Option<String>,
    /// ISO 8601 (`2026-02-10T09:00:00Z`, or a date for its midnight UTC): started at or after.
    started_after: Option<String>,
    /// ISO 8601: started before.
    started_before: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionBody {
    /// The transactionId a 1.6 charger knows the transaction by; cms's own number for a 2.0.1
    /// station's transaction.
    id: i64,
    /// The transaction's uuid: the id of its OCPI Session and CDR (docs/ocpi.md).
    #[schema(format = "uuid", required = true)]
    uuid: Option<String>,
    /// The transactionId a 2.0.1 station gave the transaction; null for a 1.6 charger's.
    #[schema(required = true)]
    station_transaction_id: Option<String>,
    charger_id: i64,
    /// The connector's record id.
    charger_connector_id: Option<i64>,
    reservation_id: Option<i64>,
    id_tag: String,
    /// How cms answered the id tag at start: `Accepted`, `Blocked`, `Expired`, `Invalid` or
    /// `ConcurrentTx` (a refused start is recorded too; a 2.0.1 station's may also be another
    /// 2.0.1 status); null for one recorded before tags were checked, or a 2.0.1 transaction
    /// without an idToken (whose `id_tag` is empty).
    id_tag_status: Option<String>,
    /// Wh, the meter reading at start.
    meter_start: i64,
    /// Wh; null while running.
    meter_stop: Option<i64>,
    /// (meter_stop − meter_start) / 1000 with two decimals, e.g. "1.50"; null while running.
    total_kwh: Option<String>,
    started_at: String,
    stopped_at: Option<String>,
    /// OCPP 1.6 reason, or a 2.0.1 station's `stoppedReason`; "Local" when the charger named
    /// none. Null while running.
    stop_reason: Option<String>,
    created_at: String,
    updated_at: String,
    charger: TransactionCharger,
    connector: TransactionConnector,
    /// The tariff the transaction started under (the site's then); null: not priced.
    #[schema(format = "uuid")]
    tariff_uuid: Option<String>,
    /// Which version of that tariff: the one in force when cms received the start (null for
    /// one started before tariffs had versions, or not priced).
    tariff_version: Option<i64>,
    /// What it costs under that tariff: the running cost so far while it runs, final once it
    /// stopped; null when not priced.
    #[schema(value_type = Option<TransactionCostBody>)]
    cost: Value,
    /// The e-mobility provider whose driver started it (by one of the provider's tags at a
    /// site of the team the provider belongs to); null otherwise.
    #[schema(format = "uuid")]
    provider_uuid: Option<String>,
}

/// A transaction's cost: decimal strings with two fractional digits.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents `cms_tariffs::Cost`, which is what is written.
pub struct TransactionCostBody {
    /// ISO 4217, the tariff's.
    currency: String,
    excl_vat: String,
    incl_vat: String,
    /// Per priced dimension: what was billed (`volume`: kWh for ENERGY, hours for TIME and
    /// PARKING_TIME, 1 for FLAT) and its price excluding VAT. Their sum may differ from
    /// `excl_vat` when the tariff's `min_price` or `max_price` applies.
    components: Vec<TransactionCostComponentBody>,
}

#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TransactionCostComponentBody {
    /// ENERGY, TIME, FLAT or PARKING_TIME.
    r#type: String,
    volume: String,
    excl_vat: String,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionCharger {
    pub(crate) uuid: String,
    pub(crate) identity: String,
    pub(crate) reference: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionConnector {
    /// The connector's number on its charger.
    connector_id: i64,
}

/// List a charger's transactions (endpoint 5). Id tags are sensitive data: the caller needs
/// sensitive access to the charger.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/transactions",
    tag = "Transactions",
    params(
        ("charger_uuid" = String, Path),
        ("limit" = Option<i64>, Query, description = "1 to 10000 (default 100)"),
        ("filter" = Option<String>, Query,
            description = "The filter as JSON, or one `filter[key]=value` parameter per key"),
    ),
    request_body(content = TransactionsRequest, description = "May be sent with the GET"),
    responses(
        (status = 200, description = "Newest first", body = Data<Vec<TransactionBody>>),
        (status = 403, body = ErrorBody,
            description = "The token lacks transactions:read, or the caller lacks sensitive access"),
    ),
    security(("bearer" = ["transactions:read"]), ("oauth2" = ["transactions:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    body: Input,
) -> Result<Json<Data<Vec<TransactionBody>>>, ApiError> {
    caller.authorize()?;
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let mut input = body.or(query_input(query));
    let limit = input.integer(
        "limit",
        Rules::optional().nullable().between(1.0, MAX_LIMIT),
    );
    let filter = input
        .object("filter", Rules::optional().nullable())
        .flatten()
        .map(|fields| read_filter(&mut input, fields))
        .unwrap_or_default();
    input.finish()?;
    let rows = state
        .store
        .transactions_of_charger(
            charger.id,
            &filter,
            limit.flatten().unwrap_or(DEFAULT_LIMIT),
        )
        .await?;
    // The readings of the priced transactions whose cost is not written yet.
    let unpriced: Vec<i64> = rows
        .iter()
        .filter(|t| t.tariff.is_some() && t.cost.is_none())
        .map(|t| t.id)
        .collect();
    let readings = state.store.transaction_readings(&unpriced).await?;
    let now = Utc::now();
    // Pricing is CPU work: off the async workers, as password hashing is.
    let data = tokio::task::spawn_blocking(move || {
        rows.into_iter()
            .map(|t| {
                let cost = crate::control::pricing::cost_of(&t, &readings, now);
                transaction(t, &charger, cost)
            })
            .collect()
    })
    .await
    .map_err(|e| ApiError::Internal(format!("pricing the transactions: {e}")))?;
    Ok(Json(Data::new(data)))
}

/// The query string as input; `filter[key]=value` pairs become keys of the `filter` object
/// (merged into a `filter={...}` given as well).
pub(crate) fn query_input(pairs: Vec<(String, String)>) -> Input {
    let mut bracketed = Map::new();
    let mut rest = Vec::new();
    for (key, value) in pairs {
        match key
            .strip_prefix("filter[")
            .and_then(|k| k.strip_suffix(']'))
        {
            Some(filter_key) => {
                bracketed.insert(filter_key.to_string(), Value::String(value));
            }
            None => rest.push((key, value)),
        }
    }
    if !bracketed.is_empty() {
        let json = rest.iter_mut().find(|(key, _)| key == "filter");
        match json {
            Some((_, text)) => {
                if let Ok(Value::Object(mut given)) = serde_json::from_str(text) {
                    given.extend(bracketed);
                    *text = Value::Object(given).to_string();
                }
            }
            None => rest.push(("filter".into(), Value::Object(bracketed).to_string())),
        }
    }
    Input::from_query(rest)
}

/// A filter object's fields as an input of their own, named `filter.<key>`, a key not in
/// `keys` already failed as prohibited.
pub(crate) fn filter_input(fields: Map<String, Value>, keys: &[&str]) -> Input {
    let unknown: Vec<String> = fields
        .keys()
        .filter(|key| !keys.contains(&key.as_str()))
        .map(|key| format!("filter.{key}"))
        .collect();
    let mut nested = Input::new(
        fields
            .into_iter()
            .map(|(key, value)| (format!("filter.{key}"), value))
            .collect(),
    );
    for field in unknown {
        nested.fail(
            &field,
            format!("The {} field is prohibited.", attribute(&field)),
        );
    }
    nested
}

/// `filter.status`: `active` or `stopped`.
pub(crate) fn status_filter(nested: &mut Input) -> Option<TransactionStatus> {
    let optional = Rules::optional().nullable();
    nested
        .one_of("filter.status", optional, &["active", "stopped"])
        .flatten()
        .map(|s| match s.as_str() {
            "active" => TransactionStatus::Active,
            _ => TransactionStatus::Stopped,
        })
}

/// Checks the filter's keys, recording failures under `filter.<key>` in `input`.
pub(crate) fn read_filter(input: &mut Input, fields: Map<String, Value>) -> TransactionFilter {
    let mut nested = filter_input(fields, &FILTER_KEYS);
    let optional = Rules::optional().nullable();
    let filter = TransactionFilter {
        status: status_filter(&mut nested),
        connector_id: nested
            .integer("filter.connector_id", optional.min(1.0))
            .flatten(),
        id_tag: nested.string("filter.id_tag", optional.max(20.0)).flatten(),
        started_after: time(&mut nested, "filter.started_after"),
        started_before: time(&mut nested, "filter.started_before"),
    };
    if let Err(ApiError::Validation(errors)) = nested.finish() {
        for (field, messages) in errors {
            for message in messages {
                input.fail(&field, message);
            }
        }
    }
    filter
}

/// An ISO 8601 time (with its offset, or a date for midnight UTC) as a record time.
pub(crate) fn time(input: &mut Input, field: &str) -> Option<String> {
    let text = input
        .string(field, Rules::optional().nullable())
        .flatten()?;
    let parsed = DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        });
    match parsed {
        Some(t) => Some(format_record_time(t)),
        None => {
            let message = format!("The {} field must be a valid date.", attribute(field));
            input.fail(field, message);
            None
        }
    }
}

pub(crate) fn transaction(t: TransactionRow, charger: &ChargerRow, cost: Value) -> TransactionBody {
    let charger = TransactionCharger {
        uuid: charger.uuid.clone(),
        identity: charger.identity.clone(),
        reference: charger.reference.clone(),
    };
    transaction_at(t, charger, cost)
}

/// The body of transaction `t` at `charger`, costing `cost`.
pub(crate) fn transaction_at(
    t: TransactionRow,
    charger: TransactionCharger,
    cost: Value,
) -> TransactionBody {
    TransactionBody {
        tariff_uuid: t.tariff_uuid,
        tariff_version: t.tariff_version,
        provider_uuid: t.provider_uuid,
        cost,
        uuid: t.uuid,
        id: match t.station_transaction_id {
            Some(_) => t.id,
            None => t.ocpp_transaction_id,
        },
        station_transaction_id: t.station_transaction_id,
        charger_id: t.charger_id,
        charger_connector_id: t.charger_connector_id,
        reservation_id: t.reservation_id,
        id_tag: t.id_tag,
        id_tag_status: t.id_tag_status,
        meter_start: t.meter_start,
        meter_stop: t.meter_stop,
        total_kwh: t.meter_stop.map(|stop| kwh(stop - t.meter_start)),
        started_at: t.started_at,
        stopped_at: t.stopped_at,
        stop_reason: t.stop_reason,
        created_at: t.created_at,
        updated_at: t.updated_at,
        charger,
        connector: TransactionConnector {
            connector_id: t.connector_id,
        },
    }
}

/// Wh as kWh with two decimals, rounded half away from zero, in integers so that 1500 Wh is
/// exactly "1.50". A meter that went backwards (replaced, reset) shows a negative amount.
pub(crate) fn kwh(wh: i64) -> String {
    let hundredths = (wh.unsigned_abs() + 5) / 10;
    let sign = if wh < 0 && hundredths > 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", hundredths / 100, hundredths % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kilowatt_hours_have_two_exact_decimals() {
        assert_eq!(kwh(1500), "1.50");
        assert_eq!(kwh(0), "0.00");
        assert_eq!(kwh(4), "0.00");
        assert_eq!(kwh(5), "0.01");
        assert_eq!(kwh(12_345_678), "12345.68");
        assert_eq!(kwh(-250), "-0.25");
        assert_eq!(kwh(-4), "0.00");
    }

    #[test]
    fn bracketed_query_keys_build_the_filter() {
        let pairs = |p: &[(&str, &str)]| {
            p.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
        };
        let input = query_input(pairs(&[("filter[status]", "stopped"), ("limit", "5")]));
        assert_eq!(
            input.raw("filter"),
            Some(&serde_json::json!({"status": "stopped"}))
        );
        let input = query_input(pairs(&[
            ("filter", r#"{"status":"active"}"#),
            ("filter[id_tag]", "TAG"),
        ]));
        assert_eq!(
            input.raw("filter"),
            Some(&serde_json::json!({"status": "active", "id_tag": "TAG"}))
        );
    }

    #[test]
    fn filter_failures_are_keyed_under_filter() {
        let mut input = Input::default();
        let fields = serde_json::json!({
            "status": "paused", "connector_id": 0, "id_tag": 7,
            "started_after": "yesterday", "colour": "red"
        });
        let Value::Object(fields) = fields else {
            unreachable!()
        };
        read_filter(&mut input, fields);
        let Err(ApiError::Validation(errors)) = input.finish() else {
            panic!("the filter is invalid");
        };
        assert_eq!(
            errors["filter.status"],
            ["The selected filter.status is invalid."]
        );
        assert_eq!(
            errors["filter.connector_id"],
            ["The filter.connector id field must be at least 1."]
        );
        assert_eq!(
            errors["filter.id_tag"],
            ["The filter.id tag field must be a string."]
        );
        assert_eq!(
            errors["filter.started_after"],
            ["The filter.started after field must be a valid date."]
        );
        assert_eq!(
            errors["filter.colour"],
            ["The filter.colour field is prohibited."]
        );
    }

    #[test]
    fn times_read_as_record_times() {
        let fields = serde_json::json!({
            "started_after": "2026-02-10T10:00:00+01:00", "started_before": "2026-02-11"
        });
        let Value::Object(fields) = fields else {
            unreachable!()
        };
        let mut input = Input::default();
        let filter = read_filter(&mut input, fields);
        assert!(input.finish().is_ok());
        assert_eq!(
            filter.started_after.as_deref(),
            Some("2026-02-10T09:00:00.000000Z")
        );
        assert_eq!(
            filter.started_before.as_deref(),
            Some("2026-02-11T00:00:00.000000Z")
        );
    }
}
