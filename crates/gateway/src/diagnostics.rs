//! Why a charger does not connect (docs/operations.md): the gateway keeps in memory each
//! charger's last frames both ways (its live session's ring, then for a while after it ended)
//! and its last connection attempts with cms's reason for each refusal. The API of the same
//! process reads them (`cms up`); refused attempts also go out on the connections topic, and
//! the frames on the command results when an API replica of a Kafka deployment asks
//! (`answer.rs`; docs/decisions.md, "A charger's diagnostics").

pub(crate) mod answer;
mod attempts;
mod frame_ring;

pub use attempts::{Attempt, RefusedBecause};
pub use frame_ring::{FrameRing, KeptFrame};

use crate::Shared;
use crate::identity::ChargerIdentity;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Identities whose attempts are kept, per generation (two are kept).
const ATTEMPT_IDENTITIES: usize = 10_000;
/// Ended sessions' frames kept, per generation (two are kept), and for how long at most.
const ENDED_RINGS: usize = 500;
const ENDED_KEPT: Duration = Duration::from_secs(60 * 60);
/// The bytes of frames kept per charger by default: 200 heartbeats with their answers, or
/// about 40 MeterValues with theirs. A gateway holds tens of thousands of chargers: 16 KiB each
/// is 320 MiB for 20,000 busy ones (docs/operations.md).
pub const FRAME_BYTES: usize = 16 * 1024;
/// Refused attempts published a second at most: a flood of made-up identities does not
/// become a flood of records (the rest are only kept here).
const REFUSALS_PUBLISHED_PER_SECOND: u32 = 100;

/// Ended sessions' rings by identity, with when each ended.
type EndedRings = HashMap<String, (Instant, Arc<FrameRing>)>;

pub struct Diagnostics {
    pub attempts: attempts::Attempts,
    /// The rings of sessions that ended, by identity, with when.
    ended: Mutex<[EndedRings; 2]>,
    /// Frames kept per session; 0 keeps none.
    pub frames: usize,
    /// Their bytes at most, per session.
    bytes: usize,
    published: Mutex<(Instant, u32)>,
}

impl Diagnostics {
    pub fn new(frames: usize, bytes: usize) -> Diagnostics {
        Diagnostics {
            attempts: attempts::Attempts::new(ATTEMPT_IDENTITIES),
            ended: Mutex::default(),
            frames,
            bytes,
            published: Mutex::new((Instant::now(), 0)),
        }
    }

    /// A new session's ring.
    pub fn ring(&self) -> Arc<FrameRing> {
        Arc::new(FrameRing::new(self.frames, self.bytes))
    }

    /// Keeps an ended session's frames for a while.
    pub fn ended(&self, identity: &str, ring: Arc<FrameRing>) {
        if self.frames == 0 {
            return;
        }
        let mut maps = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        let [newer, older] = &mut *maps;
        older.remove(identity);
        if newer.len() >= ENDED_RINGS {
            *older = std::mem::take(newer);
        }
        newer.insert(identity.to_string(), (Instant::now(), ring));
    }

    fn ended_ring(&self, identity: &str) -> Option<Arc<FrameRing>> {
        let maps = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        let (at, ring) = maps[0].get(identity).or_else(|| maps[1].get(identity))?;
        (at.elapsed() < ENDED_KEPT).then(|| ring.clone())
    }

    /// Whether one more refused attempt may go out on the bus this second.
    pub fn may_publish_refusal(&self) -> bool {
        let mut published = self.published.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if now.duration_since(published.0) >= Duration::from_secs(1) {
            *published = (now, 0);
        }
        published.1 += 1;
        published.1 <= REFUSALS_PUBLISHED_PER_SECOND
    }
}

/// What the API of the same process reads of a running gateway's diagnostics.
#[derive(Clone)]
pub struct GatewayDiagnostics(pub(crate) Weak<Shared>);

impl GatewayDiagnostics {
    /// The charger's last frames, newest first: its live session's, or its last session's
    /// here if it ended within the hour; `None` when this gateway holds none.
    pub fn frames(&self, identity: &str) -> Option<Vec<KeptFrame>> {
        let (_, ring) = self.0.upgrade()?.kept_ring(identity)?;
        Some(ring.frames())
    }

    /// The charger's last connection attempts here, newest first.
    pub fn attempts(&self, identity: &str) -> Vec<Attempt> {
        self.0
            .upgrade()
            .map(|shared| shared.diagnostics.attempts.of(identity))
            .unwrap_or_default()
    }
}

impl Shared {
    /// The ring of the charger's live session here (`true`), or of its last session here if it
    /// ended within the hour (`false`).
    pub(crate) fn kept_ring(&self, identity: &str) -> Option<(bool, Arc<FrameRing>)> {
        let live = ChargerIdentity::parse(identity)
            .ok()
            .and_then(|id| self.sessions.get(&id).map(|entry| entry.frames.clone()));
        match live {
            Some(ring) => Some((true, ring)),
            None => Some((false, self.diagnostics.ended_ring(identity)?)),
        }
    }

    /// Keeps a connection attempt of `identity` from `peer` that came in `at`, and puts a
    /// refused one on the connections topic for the API replicas of a Kafka deployment
    /// (within the second's budget).
    pub(crate) async fn attempted(
        &self,
        identity: &ChargerIdentity,
        peer: std::net::SocketAddr,
        refused: Option<RefusedBecause>,
        at: chrono::DateTime<chrono::Utc>,
    ) {
        let now = at;
        let attempt = Attempt {
            at: now,
            peer: peer.to_string(),
            refused,
        };
        self.diagnostics.attempts.record(identity.as_str(), attempt);
        let Some(because) = refused else { return };
        if !self.diagnostics.may_publish_refusal() {
            self.metrics.refusals_unpublished.increment(1);
            return;
        }
        let event = cms_bus::ConnectionEvent::Refused {
            identity: identity.as_str().to_string(),
            gateway: String::from_utf8_lossy(&self.node).into_owned(),
            at: crate::record_time::record_time(now),
            remote_addr: peer.to_string(),
            reason: because.as_str().to_string(),
        };
        let key = bytes::Bytes::copy_from_slice(identity.as_str().as_bytes());
        let record = event.record(self.topics.connections, key, self.node.clone(), None);
        if let Err(e) = self.bus.publish(record).await {
            tracing::warn!(%identity, error = %e, "refused connection not published");
        }
    }
}
