//! The API's store: the relational record of accounts, sites, chargers, connectors,
//! transactions and latest meter values, in SQLite (embedded, under the data directory) or
//! PostgreSQL.
//!
//! One set of queries serves both backends through sqlx's `Any` driver: placeholders are
//! `$1, $2, ...` (which SQLite accepts too), timestamps are record-time text, flags are integers
//! 0/1 and ids 64-bit. Each backend has its own migrations with the same tables and columns.
#![forbid(unsafe_code)]

mod access;
pub mod access_log;
mod accounts;
pub mod actions;
mod chargers;
pub mod dead_letters;
pub mod device_model;
pub mod firmware_logs;
pub mod fleet;
mod gateways;
mod id_tag_log;
pub mod id_tags;
mod latest_readings;
mod lease;
pub mod local_lists;
pub mod meters;
pub mod oauth;
pub mod ocpi;
pub mod price_display;
pub mod providers;
pub mod proxy;
pub mod quotas;
mod redact;
mod registry;
pub mod reservations;
pub mod security;
mod session_end;
pub mod signed_values;
pub mod sites;
pub mod smart_charging;
mod state;
mod statements;
pub mod station_events;
pub mod tariffs;
mod team_owned;
pub mod teams;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
mod time;
pub mod tokens;
pub mod transaction_readings;
mod transaction_tariff;
pub mod transactions;
pub mod webhooks;

pub use access::Permissions;
pub use accounts::{Scope, TokenOwner, User};
pub use chargers::{ChargerRow, ConnectorRow, Licenses, NewCharger, StoredMeterValue};
pub use gateways::SilentGateway;
pub use id_tag_log::{IdTagChange, IdTagState};
pub use quotas::{Quota, QuotaReached, Quotas};
pub use redact::redacted_url;
pub use registry::{LocationRef, RegistryChange, RegistryEntry};
pub use state::{EnergyReading, StateChange};
pub use time::{format_record_time, now_record_time};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyPool, Executor};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("unsupported database URL {0:?}: use postgres://USER@HOST/DB or sqlite://PATH")]
    UnsupportedUrl(String),
    /// The database could not be reached; `at` is its URL without the password.
    #[error("cannot connect to the database at {at}: {source}")]
    Connect { at: String, source: sqlx::Error },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NotFound(String),
    /// A creation would take its team or user past a quota; nothing was written.
    #[error("{0}")]
    QuotaReached(QuotaReached),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Which database a store is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The store. Cheap to clone (a connection pool).
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Where statements outside transactions run (see `statements`).
    statements: statements::Statements,
    /// Where the actions that REST requests take are inserted together (see
    /// `actions::inserts`).
    action_inserts: std::sync::Arc<actions::inserts::ActionInserts>,
    /// What each team and user may create (`quotas`).
    quotas: Quotas,
}

impl Store {
    /// Opens (creating when missing) `cms.sqlite3` in `data_dir` and applies the migrations.
    /// Several processes may open the same data directory at once (WAL mode, busy timeout):
    /// that is how `cms token create` works beside a running `cms up`.
    pub async fn open(data_dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        Self::open_file(&data_dir.join("cms.sqlite3")).await
    }

    /// Opens a store by URL, `postgres://...` (or `postgresql://`) or `sqlite://PATH`, and
    /// applies the migrations.
    pub async fn open_url(url: &str) -> Result<Store> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Self::open_postgres(url).await;
        }
        match url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            Some(path) => Self::open_file(Path::new(path)).await,
            None => Err(StoreError::UnsupportedUrl(redacted_url(url))),
        }
    }

    /// Opens (creating when missing) the SQLite database in `file` and applies the migrations.
    pub async fn open_file(file: &Path) -> Result<Store> {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        install_default_drivers();
        // The URL form of the path: `?`, `#` and `%` would otherwise end or escape it.
        const PATH: &percent_encoding::AsciiSet =
            &percent_encoding::CONTROLS.add(b'?').add(b'#').add(b'%');
        let path =
            percent_encoding::utf8_percent_encode(&file.display().to_string(), PATH).to_string();
        let pool = AnyPoolOptions::new()
            .max_connections(8)
            // sqlx pings an idle connection before lending it: a second trip to the
            // connection's thread and back for every statement. A SQLite connection is a
            // thread of this process, not a peer that can vanish (a worker that died fails the
            // statement itself), so the ping buys nothing and cost about a third of the store's
            // context switches (docs/performance.md "Commands in flight").
            .test_before_acquire(false)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    // Foreign keys are on by default in sqlx's SQLite driver; WAL lets the
                    // command line write beside a running service.
                    conn.execute(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                         PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;",
                    )
                    .await?;
                    Ok(())
                })
            })
            .connect(&format!("sqlite://{path}?mode=rwc"))
            .await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        Ok(Store {
            statements: statements::Statements::new(Backend::Sqlite, pool.clone()),
            pool,
            backend: Backend::Sqlite,
            action_inserts: Default::default(),
            quotas: Quotas::DEFAULT,
        })
    }

    async fn open_postgres(url: &str) -> Result<Store> {
        install_default_drivers();
        let pool = AnyPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await
            .map_err(|source| StoreError::Connect {
                at: redacted_url(url),
                source,
            })?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(Store {
            statements: statements::Statements::new(Backend::Postgres, pool.clone()),
            pool,
            backend: Backend::Postgres,
            action_inserts: Default::default(),
            quotas: Quotas::DEFAULT,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The executor of a statement outside a transaction.
    pub(crate) fn db(&self) -> &statements::Statements {
        &self.statements
    }

    /// A transaction that writes. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`,
    /// waiting up to the busy timeout): a deferred transaction that reads first and writes
    /// after fails at once ("database is locked") when another connection wrote in between,
    /// another process's (`cms charger add` beside `cms up`, two `cms api`) or this one's.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>> {
        Ok(match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        })
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(self.db()).await.is_ok()
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// `count` numbered parameters from `$first` on, comma-separated: a row of a multi-row
/// statement.
pub(crate) fn parameters(first: usize, count: usize) -> String {
    let numbered: Vec<String> = (first..first + count).map(|n| format!("${n}")).collect();
    numbered.join(", ")
}

/// A flag column (integer 0/1 on both backends) as a bool.
pub(crate) fn flag(row: &sqlx::any::AnyRow, column: &str) -> Result<bool, sqlx::Error> {
    use sqlx::Row;
    Ok(row.try_get::<i64, _>(column)? != 0)
}

#[cfg(test)]
mod carried_over;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
