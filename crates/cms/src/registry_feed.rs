//! The charger directory of `cms up`: the store's registry change log read into the gateway's
//! in-memory directory, then followed a few times a second, as `cms gateway` follows the
//! registry topic. A charger registered by another process (`cms charger add`) can connect
//! within [`POLL`].

use cms_gateway::RegistryDirectory;
use cms_store::{RegistryChange, Store, StoreError};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the change log is read once caught up: one indexed query, cheap enough to make
/// a new registration usable at once for a person at a terminal.
pub const POLL: Duration = Duration::from_millis(250);
const BATCH: i64 = 5_000;

/// Reads the whole change log into `directory` and marks it caught up; returns where the log
/// was read to.
pub async fn catch_up(store: &Store, directory: &RegistryDirectory) -> Result<i64, StoreError> {
    let mut cursor = 0;
    loop {
        let changes = store.registry_changes_since(cursor, BATCH).await?;
        cursor = apply(directory, &changes).unwrap_or(cursor);
        if (changes.len() as i64) < BATCH {
            directory.set_caught_up();
            tracing::info!(chargers = directory.len(), "charger registry loaded");
            return Ok(cursor);
        }
    }
}

/// Follows the change log from `cursor` until `stop`.
pub async fn follow(
    store: Store,
    directory: Arc<RegistryDirectory>,
    mut cursor: i64,
    stop: CancellationToken,
) {
    while !stop.is_cancelled() {
        match store.registry_changes_since(cursor, BATCH).await {
            Ok(changes) if !changes.is_empty() => {
                cursor = apply(&directory, &changes).unwrap_or(cursor);
                continue;
            }
            Ok(_) => {}
            // The directory keeps what it has: chargers known so far still connect.
            Err(e) => tracing::error!(error = %e, "cannot read the charger registry change log"),
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Applies changes in order; the sequence number of the last one.
fn apply(directory: &RegistryDirectory, changes: &[RegistryChange]) -> Option<i64> {
    for change in changes {
        directory.apply_state(&change.identity, cms_api::registry_state(change));
    }
    changes.last().map(|c| c.seq)
}
