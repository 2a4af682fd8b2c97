//! The API's store: the relational record of accounts, sites, chargers, connectors,
//! transactions and latest meter values, kept in SQLite under the data directory.
#![forbid(unsafe_code)]

mod accounts;
mod chargers;
mod registry;
mod state;
mod time;

pub use accounts::{Scope, TokenOwner, User};
pub use chargers::{ChargerRow, NewCharger, StoredMeterValue};
pub use registry::{RegistryChange, RegistryEntry};
pub use state::StateChange;
pub use time::{format_record_time, now_record_time};

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
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
    #[error("unsupported database URL {0:?}: this build stores in SQLite (sqlite://PATH)")]
    UnsupportedUrl(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NotFound(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The store. Cheap to clone (a connection pool).
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
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

    /// Opens a store by URL: `sqlite://PATH` (or `sqlite:PATH`).
    pub async fn open_url(url: &str) -> Result<Store> {
        match url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            Some(path) => Self::open_file(Path::new(path)).await,
            None => Err(StoreError::UnsupportedUrl(url.to_string())),
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
        let options = SqliteConnectOptions::new()
            .filename(file)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Store { pool })
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests;
