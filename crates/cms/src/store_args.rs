//! Where the store lives: the same two options on every command that opens it.

use cms_store::{Store, StoreError};
use std::path::PathBuf;

#[derive(Clone, clap::Args)]
pub struct StoreArgs {
    /// The data directory of the embedded SQLite store (created when missing).
    #[arg(long, env = "CMS_DATA_DIR", default_value = "./cms-data")]
    pub data_dir: PathBuf,
    /// A database instead of the data directory: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`
    /// or `sqlite://PATH`. Migrations are applied at start. Logs show it without its password.
    #[arg(long, env = "CMS_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
}

impl StoreArgs {
    pub async fn open(&self) -> Result<Store, StoreError> {
        match &self.database_url {
            Some(url) => Store::open_url(url).await,
            None => Store::open(&self.data_dir).await,
        }
    }

    /// Where the store is, for logs (never the password of a URL).
    pub fn describe(&self) -> String {
        match &self.database_url {
            Some(url) => cms_store::redacted_url(url),
            None => self.data_dir.display().to_string(),
        }
    }
}

/// Debug output (of the parsed arguments, say) never shows the URL's password either.
impl std::fmt::Debug for StoreArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreArgs")
            .field("data_dir", &self.data_dir)
            .field(
                "database_url",
                &self.database_url.as_deref().map(cms_store::redacted_url),
            )
            .finish()
    }
}
