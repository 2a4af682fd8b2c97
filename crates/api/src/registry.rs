//! Publishes the charger registry to the compacted topic that gateways materialise, so that a
//! charger registered anywhere (the API, `cms charger add`, an import) can connect to any
//! gateway within a few seconds, with no gateway ever asking the database.

use cms_bus::{Publisher, Registration, RegistryState, Topics, registry_record};
use cms_store::{RegistryChange, Store};
use futures_util::future::join_all;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the store's registry change log is read.
const POLL: Duration = Duration::from_secs(1);
const BATCH: i64 = 5_000;

pub struct RegistryPublisher {
    pub store: Store,
    pub bus: Arc<dyn Publisher>,
    pub topics: Topics,
}

impl RegistryPublisher {
    /// Runs until `stop`. Starts from the beginning of the change log at every start: the topic
    /// is compacted, so republishing costs a burst, never a wrong state.
    pub async fn run(self, stop: CancellationToken) {
        let published = metrics::counter!("cms_registry_published_total");
        let mut cursor = 0;
        while !stop.is_cancelled() {
            let changes = match self.store.registry_changes_since(cursor, BATCH).await {
                Ok(changes) => changes,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read the registry change log");
                    Vec::new()
                }
            };
            if changes.is_empty() {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(POLL) => continue,
                }
            }
            let deliveries = changes.iter().map(|change| {
                let state = registry_state(change);
                self.bus
                    .publish(registry_record(&self.topics, &change.identity, &state))
            });
            let results = join_all(deliveries).await;
            if let Some(e) = results.iter().find_map(|r| r.as_ref().err()) {
                // Retry the same changes: publishing them twice is harmless.
                tracing::error!(error = %e, "registry publish failed; retrying");
                tokio::time::sleep(POLL).await;
                continue;
            }
            published.increment(changes.len() as u64);
            cursor = changes.last().map_or(cursor, |c| c.seq);
        }
    }
}

/// A change of the store's registry log as the state gateways hold.
pub fn registry_state(change: &RegistryChange) -> RegistryState {
    match &change.registration {
        Some(entry) => RegistryState::Registered(Registration {
            password_hash: entry.password_hash.clone(),
            security_profile: u8::try_from(entry.security_profile).unwrap_or(u8::MAX),
        }),
        None => RegistryState::Unregistered,
    }
}
