//! A team's transactions as CSV (RFC 4180: CRLF line ends, fields holding `,` `"` CR or LF
//! quoted, quotes doubled), with a header row. Every matching row, newest first, at most
//! [`MAX_ROWS`]: read from the store [`BATCH`] rows at a time by keyset and written as each
//! batch comes, so the file is never whole in memory.
//!
//! Numbers are plain decimals (kWh and costs with two decimals, as the JSON gives them), times
//! RFC 3339 in UTC as stored, empty fields for what is not known (a running session's stop and
//! energy, an unpriced session's cost). A text field that a spreadsheet would read as a formula
//! (starting with `=`, `+`, `-`, `@`, tab or CR) is prefixed with `'`: an id tag is whatever a
//! driver's card or app says.

use super::{TeamFilter, TeamTransactionBody, priced, read_filter};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::teams::member_team;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use cms_store::transactions::After;
use serde_json::Value;

/// The most rows one export holds (the newest): narrow the filter for older ones.
pub const MAX_ROWS: usize = 100_000;
/// Rows read from the store at a time.
const BATCH: i64 = 500;

const HEADER: &str = "transaction_uuid,charger_identity,connector_id,id_tag,started_at,\
    stopped_at,energy_kwh,cost_excl_vat,cost_incl_vat,currency\r\n";

/// Export a team's transactions as CSV.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/transactions.csv",
    tag = "Transactions",
    params(
        ("team_uuid" = String, Path),
        ("filter[status]" = Option<String>, Query, description = "`active` or `stopped`"),
        ("filter[charger_uuid]" = Option<String>, Query, description = "Only this charger's"),
        ("filter[from]" = Option<String>, Query, description = "Started at or after (RFC 3339, or a date)"),
        ("filter[to]" = Option<String>, Query, description = "Started before (RFC 3339, or a date)"),
    ),
    responses(
        (status = 200, description = "`transaction_uuid,charger_identity,connector_id,id_tag,\
            started_at,stopped_at,energy_kwh,cost_excl_vat,cost_incl_vat,currency`, then one row \
            per transaction, newest first, at most 100,000. `transaction_uuid` is the transaction's \
            `id` in the JSON list (a 2.0.1 station's own transactionId when it has one)",
            content_type = "text/csv", body = String),
    ),
    security(("bearer" = ["transactions:read"]), ("oauth2" = ["transactions:read"]))
)]
pub async fn export(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let filter = read_filter(query)?;
    let export = Export {
        state,
        team_id: team.id,
        filter,
        after: None,
        written: 0,
        started: false,
    };
    let body = futures_util::stream::unfold(export, |mut export| async move {
        let chunk = export.next().await?;
        Some((chunk, export))
    });
    Ok((
        [
            (CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                CONTENT_DISPOSITION,
                r#"attachment; filename="transactions.csv""#,
            ),
            (CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(body),
    )
        .into_response())
}

/// Where an export is.
struct Export {
    state: AppState,
    team_id: i64,
    filter: TeamFilter,
    after: Option<After>,
    written: usize,
    started: bool,
}

impl Export {
    /// The next chunk of the file: the header, then a batch of rows; `None` at the end.
    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if !self.started {
            self.started = true;
            return Some(Ok(Bytes::from_static(HEADER.as_bytes())));
        }
        let room = MAX_ROWS.saturating_sub(self.written);
        if room == 0 {
            return None;
        }
        let limit = BATCH.min(room as i64);
        let rows = self
            .state
            .store
            .team_transactions_after(
                self.team_id,
                &self.filter.transactions,
                self.filter.charger_uuid.as_deref(),
                self.after.as_ref(),
                limit,
            )
            .await;
        let rows = match rows {
            Ok(rows) if rows.is_empty() => return None,
            Ok(rows) => rows,
            Err(e) => return Some(Err(cut_short(e))),
        };
        if (rows.len() as i64) < limit {
            // The last batch: nothing after it.
            self.written = MAX_ROWS;
        } else {
            self.written += rows.len();
        }
        self.after = rows.last().map(|last| After {
            started_at: last.transaction.started_at.clone(),
            id: last.transaction.id,
        });
        let bodies = match priced(&self.state, rows).await {
            Ok(bodies) => bodies,
            Err(e) => return Some(Err(cut_short(format!("{e:?}")))),
        };
        let mut text = String::new();
        for body in bodies {
            text.push_str(&row(&body));
        }
        Some(Ok(Bytes::from(text)))
    }
}

/// A failure after the answer began: the body ends short (the client sees a broken transfer,
/// not a file that looks whole).
fn cut_short(e: impl std::fmt::Display) -> std::io::Error {
    tracing::warn!(error = %e, "a transactions export stopped");
    std::io::Error::other(e.to_string())
}

/// One CSV line of a transaction as the JSON list gives it.
fn row(body: &TeamTransactionBody) -> String {
    let json = serde_json::to_value(body).unwrap_or(Value::Null);
    let text = |value: &Value| match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    let id = match &json["station_transaction_id"] {
        Value::String(own) => own.clone(),
        _ => text(&json["id"]),
    };
    let cost = &json["cost"];
    let fields = [
        guarded(&id),
        guarded(&text(&json["charger_identity"])),
        text(&json["connector"]["connector_id"]),
        guarded(&text(&json["id_tag"])),
        text(&json["started_at"]),
        text(&json["stopped_at"]),
        text(&json["total_kwh"]),
        text(&cost["excl_vat"]),
        text(&cost["incl_vat"]),
        guarded(&text(&cost["currency"])),
    ];
    let mut line = fields.map(|f| quoted(&f)).join(",");
    line.push_str("\r\n");
    line
}

/// Text a spreadsheet would take for a formula, made plain text.
fn guarded(text: &str) -> String {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    }
}

/// A field as RFC 4180 writes it.
fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_says_and_formulas_are_plain_text() {
        assert_eq!(quoted("TAG-1"), "TAG-1");
        assert_eq!(quoted("TAG,1"), "\"TAG,1\"");
        assert_eq!(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quoted("a\nb"), "\"a\nb\"");
        assert_eq!(guarded("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(guarded("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(guarded("TAG"), "TAG");
    }
}
