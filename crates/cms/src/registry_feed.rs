//! What the gateway of `cms up` holds in memory, from the store: the charger registry and the
//! teams' id tags, each read from its change log into memory, then followed a few times a
//! second, as `cms gateway` follows their topics. A charger or a tag registered by another
//! process (`cms charger add`, `cms id-tag import`) takes effect within [`POLL`].

use cms_gateway::{IdTagDirectory, RegistryDirectory};
use cms_store::{Store, StoreError};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the change logs are read once caught up: one indexed query each, cheap enough to
/// make a new registration usable at once for a person at a terminal.
pub const POLL: Duration = Duration::from_millis(250);
const BATCH: i64 = 5_000;

/// The gateway's in-memory views, and where each change log was read to.
pub struct Feed {
    pub registry: Arc<RegistryDirectory>,
    pub id_tags: Arc<IdTagDirectory>,
    registry_seq: i64,
    id_tag_seq: i64,
}

impl Feed {
    /// Reads both change logs whole into memory and marks the views caught up.
    pub async fn catch_up(store: &Store) -> Result<Feed, StoreError> {
        let mut feed = Feed {
            registry: Arc::default(),
            id_tags: Arc::default(),
            registry_seq: 0,
            id_tag_seq: 0,
        };
        while feed.read(store).await? == BATCH as usize {}
        feed.registry.set_caught_up();
        feed.id_tags.set_caught_up();
        tracing::info!(
            chargers = feed.registry.len(),
            id_tags = feed.id_tags.len(),
            "charger registry and id tags loaded"
        );
        Ok(feed)
    }

    /// Follows the change logs until `stop`.
    pub async fn follow(mut self, store: Store, stop: CancellationToken) {
        while !stop.is_cancelled() {
            match self.read(&store).await {
                Ok(0) => {}
                Ok(_) => continue,
                // The views keep what they have: chargers and tags known so far still work.
                Err(e) => tracing::error!(error = %e, "cannot read the registry change logs"),
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Applies the next batch of each log; the larger batch's length.
    async fn read(&mut self, store: &Store) -> Result<usize, StoreError> {
        let chargers = store
            .registry_changes_since(self.registry_seq, BATCH)
            .await?;
        for change in &chargers {
            let state = cms_api::registry_state(change);
            self.registry.apply_state(&change.identity, state);
        }
        self.registry_seq = chargers.last().map_or(self.registry_seq, |c| c.seq);
        let tags = store.id_tag_changes_since(self.id_tag_seq, BATCH).await?;
        for change in &tags {
            let entry = cms_api::id_tag_entry(change);
            self.id_tags
                .apply(change.team_id, &change.id_tag_key, entry.as_ref());
        }
        self.id_tag_seq = tags.last().map_or(self.id_tag_seq, |c| c.seq);
        Ok(chargers.len().max(tags.len()))
    }
}
