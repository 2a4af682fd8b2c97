//! A batch's 2.0.1 transactions read and written many to a statement: while stations charge,
//! each sends a TransactionEvent a reading, and a batch holds one or a few of each of
//! thousands of transactions (a station waits for its answer before its next). A statement
//! for each would be the materialiser's whole cost, as it was for 1.6's readings before
//! `latest_readings`, whose ways this follows: statements of a few fixed sizes (so the
//! statement cache holds few forms) and, on SQLite, anonymous parameters.

use super::StoredTransaction;
use crate::{Backend, Result};
use sqlx::AnyConnection;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Rows per statement, largest first; a run is cut into these sizes.
const SIZES: [usize; 8] = [128, 64, 32, 16, 8, 4, 2, 1];

/// `items` cut into runs of [`SIZES`], each with its size's place in it.
pub(crate) fn runs<T>(mut items: &[T]) -> impl Iterator<Item = (usize, &[T])> {
    std::iter::from_fn(move || {
        let (form, &rows) = SIZES
            .iter()
            .enumerate()
            .find(|&(_, &rows)| rows <= items.len())?;
        let (now, later) = items.split_at(rows);
        items = later;
        Some((form, now))
    })
}

/// `rows` tuples of `width` parameters: `(?, ?)` on SQLite (bound in order: the same as
/// numbered, without SQLite's walk to find each name), `($1, $2)` on PostgreSQL, the first of
/// each cast by `casts` (e.g. `CAST({} AS BIGINT)`, or `{}`).
pub(crate) fn tuples(backend: Backend, rows: usize, casts: &[&str]) -> String {
    let width = casts.len();
    let tuple = |row: usize| {
        let cells: Vec<String> = (0..width)
            .map(|i| {
                let parameter = match backend {
                    Backend::Sqlite => "?".to_string(),
                    Backend::Postgres => format!("${}", row * width + i + 1),
                };
                casts[i].replace("{}", &parameter)
            })
            .collect();
        format!("({})", cells.join(", "))
    };
    let all: Vec<String> = (0..rows).map(tuple).collect();
    all.join(", ")
}

/// The statement of `form` for `backend`, made once.
pub(crate) fn statement(
    cache: &'static [OnceLock<Vec<String>>; 2],
    backend: Backend,
    form: usize,
    make: fn(Backend, usize) -> String,
) -> &'static str {
    let cached = &cache[backend as usize];
    &cached.get_or_init(|| SIZES.iter().map(|&rows| make(backend, rows)).collect())[form]
}

fn lookup_statement(backend: Backend, rows: usize) -> String {
    format!(
        "WITH k(identity, tx) AS (VALUES {})
         SELECT k.identity, k.tx, c.id, t.id, t.assembly,
           CASE WHEN t.id IS NULL THEN NULL WHEN t.tariff IS NULL THEN 0 ELSE 1 END
         FROM k JOIN chargers c ON c.identity = k.identity
         LEFT JOIN transactions t
           ON t.charger_id = c.id AND t.station_transaction_id = k.tx",
        tuples(backend, rows, &["{}", "{}"])
    )
}

fn update_statement(backend: Backend, rows: usize) -> String {
    format!(
        "WITH v(id, assembly, at) AS (VALUES {})
         UPDATE transactions SET assembly = v.assembly, updated_at = v.at
         FROM v WHERE transactions.id = v.id",
        tuples(backend, rows, &["CAST({} AS BIGINT)", "{}", "{}"])
    )
}

/// A key, its charger, and its transaction's id, assembly and whether it is priced.
type Found = (
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// Each (identity, station transaction id)'s charger and transaction, in as few statements as
/// fit; a key whose charger is not registered (removed meanwhile) is absent.
pub(crate) async fn lookup(
    db: &mut AnyConnection,
    backend: Backend,
    keys: &[(&str, &str)],
) -> Result<HashMap<(String, String), StoredTransaction>> {
    static CACHE: [OnceLock<Vec<String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let mut found = HashMap::with_capacity(keys.len());
    for (form, run) in runs(keys) {
        let mut query = sqlx::query_as(statement(&CACHE, backend, form, lookup_statement));
        for (identity, tx) in run {
            query = query.bind(*identity).bind(*tx);
        }
        let rows: Vec<Found> = query.fetch_all(&mut *db).await?;
        for (identity, tx, charger, id, assembly, priced) in rows {
            found.insert((identity, tx), (charger, id, assembly, priced));
        }
    }
    Ok(found)
}

/// A transaction whose assembly alone moved.
pub(crate) struct Assembly<'a> {
    pub id: i64,
    pub assembly: String,
    /// When the gateway received its newest event.
    pub at: &'a str,
}

/// Writes the assemblies, many to a statement.
pub(crate) async fn write_assemblies(
    db: &mut AnyConnection,
    backend: Backend,
    rows: &[Assembly<'_>],
) -> Result<()> {
    static CACHE: [OnceLock<Vec<String>>; 2] = [OnceLock::new(), OnceLock::new()];
    for (form, run) in runs(rows) {
        let mut query = sqlx::query(statement(&CACHE, backend, form, update_statement));
        for row in run {
            query = query.bind(row.id).bind(&row.assembly).bind(row.at);
        }
        query.execute(&mut *db).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_cut_into_the_fixed_sizes() {
        let items: Vec<u32> = (0..203).collect();
        let sizes: Vec<usize> = runs(&items).map(|(_, run)| run.len()).collect();
        assert_eq!(sizes, [128, 64, 8, 2, 1]);
        assert_eq!(runs::<u32>(&[]).count(), 0);
    }

    #[test]
    fn sqlite_takes_its_parameters_in_order_and_postgres_by_number() {
        let casts = ["CAST({} AS BIGINT)", "{}"];
        assert_eq!(
            tuples(Backend::Sqlite, 2, &casts),
            "(CAST(? AS BIGINT), ?), (CAST(? AS BIGINT), ?)"
        );
        assert_eq!(
            tuples(Backend::Postgres, 2, &casts),
            "(CAST($1 AS BIGINT), $2), (CAST($3 AS BIGINT), $4)"
        );
    }
}
