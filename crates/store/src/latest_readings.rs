//! The newest reading of each connector, written many rows to a statement.
//!
//! Under load a materialiser's batch holds about one reading for each of thousands of
//! connectors. Written a statement each, every row cost a wake-up of the database's worker
//! thread and one back; here a run of readings goes in statements of up to 256 rows. That
//! saves the wake-ups, not the rows' own work (docs/performance.md, "The newest readings,
//! many rows to a statement").
//!
//! On SQLite the rows' parameters are anonymous (`?`), not numbered (`$n`): sqlx looks up each
//! parameter's name when binding, and SQLite finds a name by walking the statement's list of
//! them, so numbered parameters cost a quadratic walk per statement (docs/performance.md,
//! "Parameters by name, a quadratic walk").

use crate::{Backend, Result};
use sqlx::AnyConnection;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Rows per statement, largest first. A run is cut into these sizes, so that the statements'
/// cache holds at most this many forms of the statement, whatever the runs' lengths.
const SIZES: [usize; 9] = [256, 128, 64, 32, 16, 8, 4, 2, 1];

/// One connector's reading, as `StateChange::MeterValue` holds it.
pub(crate) struct Reading<'a> {
    pub identity: &'a str,
    pub connector_id: i64,
    pub meter_value: &'a str,
    pub measured_at: &'a str,
    pub at: &'a str,
}

/// Readings waiting to be written, in the order they came.
pub(crate) struct LatestReadings<'a> {
    backend: Backend,
    pending: Vec<Reading<'a>>,
    connectors: HashSet<(&'a str, i64)>,
}

impl<'a> LatestReadings<'a> {
    pub fn new(backend: Backend) -> Self {
        LatestReadings {
            backend,
            pending: Vec::new(),
            connectors: HashSet::new(),
        }
    }

    pub async fn push(&mut self, db: &mut AnyConnection, reading: Reading<'a>) -> Result<()> {
        let connector = (reading.identity, reading.connector_id);
        if !self.connectors.insert(connector) {
            // A second reading of a connector: what is pending, its first among them, is
            // written before it, as PostgreSQL updates a row at most once in a statement.
            self.flush(db).await?;
            self.connectors.insert(connector);
        }
        self.pending.push(reading);
        if self.pending.len() == SIZES[0] {
            self.flush(db).await?;
        }
        Ok(())
    }

    /// Writes every pending reading. A reading older than the stored one changes nothing.
    pub async fn flush(&mut self, db: &mut AnyConnection) -> Result<()> {
        let mut rest = &self.pending[..];
        while !rest.is_empty() {
            let (form, &rows) = SIZES
                .iter()
                .enumerate()
                .find(|&(_, &rows)| rows <= rest.len())
                .expect("the smallest size is one row");
            let (now, later) = rest.split_at(rows);
            let mut query = sqlx::query(statement(self.backend, form));
            for r in now {
                query = query
                    .bind(r.identity)
                    .bind(r.connector_id)
                    .bind(r.meter_value)
                    .bind(r.measured_at)
                    .bind(r.at);
            }
            query.execute(&mut *db).await?;
            rest = later;
        }
        self.pending.clear();
        self.connectors.clear();
        Ok(())
    }
}

/// The upsert of `SIZES[form]` rows. A charger that is not registered (deleted meanwhile) gets
/// no row: the join finds none.
fn statement(backend: Backend, form: usize) -> &'static str {
    static SQLITE: OnceLock<Vec<String>> = OnceLock::new();
    static POSTGRES: OnceLock<Vec<String>> = OnceLock::new();
    let statements = match backend {
        Backend::Sqlite => &SQLITE,
        Backend::Postgres => &POSTGRES,
    };
    &statements.get_or_init(|| SIZES.iter().map(|&rows| upsert(backend, rows)).collect())[form]
}

fn upsert(backend: Backend, rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|row| match backend {
            // Bound in order, so the same as `$n` to SQLite, without the names.
            Backend::Sqlite => "(?, ?, ?, ?, ?)".to_string(),
            Backend::Postgres => format!("({})", crate::parameters(row * 5 + 1, 5)),
        })
        .collect();
    // `column1`..`column5` are the names both SQLite and PostgreSQL give a VALUES list's
    // columns. `WHERE true` keeps SQLite from reading ON CONFLICT as the join's ON.
    format!(
        "INSERT INTO latest_meter_values (charger_id, connector_id, meter_value, measured_at, updated_at)
         SELECT c.id, v.column2, v.column3, v.column4, v.column5
         FROM (VALUES {}) AS v JOIN chargers c ON c.identity = v.column1
         WHERE true
         ON CONFLICT (charger_id, connector_id) DO UPDATE SET
           meter_value = excluded.meter_value, measured_at = excluded.measured_at,
           updated_at = excluded.updated_at
         WHERE excluded.measured_at >= latest_meter_values.measured_at",
        values.join(", ")
    )
}
