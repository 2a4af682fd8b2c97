//! What the gateway of `cms up` holds in memory, from the store: the charger registry and the
//! teams' id tags (and the providers' OCPI party links, logged with them), each read from its
//! change log into memory, then followed a few times a
//! second, as `cms gateway` follows their topics. A charger or a tag registered by another
//! process (`cms charger add`, `cms id-tag import`) takes effect within [`POLL`], and a charger
//! connects as soon as its `cms charger add` exited: a handshake of an unknown identity has the
//! feed read the logs first ([`Feed::refresher`]). One changed through the REST API of the same
//! process takes effect before the answer ([`Feed::asker`]).

use cms_bus::BoxFuture;
use cms_gateway::{IdTagDirectory, RegistryDirectory};
use cms_store::{Store, StoreError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// How often the change logs are read once caught up: one indexed query each, cheap enough to
/// make a new registration usable at once for a person at a terminal.
pub const POLL: Duration = Duration::from_millis(250);
const BATCH: i64 = 5_000;
/// How long an answer of the REST API waits for the feed to read its change at most: a store
/// that fails the feed's read should not hold every change's answer for long.
const ASKED_AT_MOST: Duration = Duration::from_secs(5);
/// How long a handshake of an unknown identity waits for the feed's read at most. Reads are
/// shared: however many strangers knock at once, the store sees one indexed query at a time.
const MISS_AT_MOST: Duration = Duration::from_secs(1);

/// The gateway's in-memory views, and where each change log was read to.
pub struct Feed {
    pub registry: Arc<RegistryDirectory>,
    pub id_tags: Arc<IdTagDirectory>,
    registry_seq: i64,
    id_tag_seq: i64,
    asked: Arc<Asked>,
}

/// Reads of the change logs asked of the feed ([`Asker`]), and how far it has answered them.
#[derive(Default)]
struct Asked {
    /// Numbers the requests, from 1.
    asked: AtomicU64,
    /// Wakes the feed before its next poll.
    wake: Notify,
    /// The last request number taken before a read of both logs to their end.
    read: watch::Sender<u64>,
}

/// Asks the feed to read the change logs now, and waits until it has: how a change made
/// through the REST API is in force at the gateway of `cms up` when it is answered.
pub struct Asker(Arc<Asked>);

impl cms_api::GatewayInProcess for Asker {
    fn read_changes(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.0.read_now(ASKED_AT_MOST).await {
                tracing::warn!("answered before the gateway read the change: it takes a poll");
            }
        })
    }
}

impl Asked {
    /// Wakes the feed and waits (at most `at_most`) for a read that started after this call;
    /// whether it came.
    async fn read_now(&self, at_most: Duration) -> bool {
        // Taken after the change was committed: a read that starts after it sees it.
        let request = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let mut read = self.read.subscribe();
        self.wake.notify_one();
        let done = tokio::time::timeout(at_most, read.wait_for(|r| *r >= request));
        matches!(done.await, Ok(Ok(_)))
    }
}

impl Feed {
    /// Reads both change logs whole into memory and marks the views caught up.
    pub async fn catch_up(store: &Store) -> Result<Feed, StoreError> {
        let mut feed = Feed {
            registry: Arc::default(),
            id_tags: Arc::default(),
            registry_seq: 0,
            id_tag_seq: 0,
            asked: Arc::default(),
        };
        feed.read_to_end(store).await?;
        feed.registry.set_caught_up();
        feed.id_tags.set_caught_up();
        tracing::info!(
            chargers = feed.registry.len(),
            id_tags = feed.id_tags.len(),
            "charger registry and id tags loaded"
        );
        Ok(feed)
    }

    /// Wakes this feed and waits for its next read of the change logs.
    pub fn asker(&self) -> Asker {
        Asker(self.asked.clone())
    }

    /// What the registry asks before it answers an identity unknown: a read of the logs now.
    pub fn refresher(&self) -> cms_gateway::Refresh {
        let asked = self.asked.clone();
        Box::new(move || {
            let asked = asked.clone();
            Box::pin(async move {
                asked.read_now(MISS_AT_MOST).await;
            })
        })
    }

    /// Follows the change logs until `stop`: every [`POLL`], or at once when asked.
    pub async fn follow(mut self, store: Store, stop: CancellationToken) {
        while !stop.is_cancelled() {
            let asked = self.asked.asked.load(Ordering::SeqCst);
            match self.read_to_end(&store).await {
                Ok(()) => {
                    self.asked.read.send_replace(asked);
                }
                // The views keep what they have: chargers and tags known so far still work.
                Err(e) => tracing::error!(error = %e, "cannot read the registry change logs"),
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(POLL) => {}
                _ = self.asked.wake.notified() => {}
            }
        }
    }

    async fn read_to_end(&mut self, store: &Store) -> Result<(), StoreError> {
        while self.read(store).await? == BATCH as usize {}
        Ok(())
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
            // A provider's OCPI party: what a real-time authorisation of its tokens needs.
            if change.is_party() {
                (self.id_tags).apply_party(change.team_id, cms_api::party_link(change));
                continue;
            }
            let entry = cms_api::id_tag_entry(change);
            self.id_tags
                .apply(change.team_id, &change.id_tag_key, entry.as_ref());
        }
        self.id_tag_seq = tags.last().map_or(self.id_tag_seq, |c| c.seq);
        Ok(chargers.len().max(tags.len()))
    }
}
