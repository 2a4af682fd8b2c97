//! Where the API reads a charger's diagnostics (`GET .../messages`, `.../connection-attempts`):
//! in `cms up` from its own gateway's memory; in `cms api` (the Kafka deployment) the
//! connection attempts from the connections topic (`crate::ingest::connection_attempts`), the
//! frames asked of the gateway keeping them (`crate::control::frames_from_bus`; docs/decisions.md,
//! "A charger's diagnostics").

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use std::sync::{Arc, OnceLock};

/// A frame as a gateway kept it.
#[derive(Debug, Clone)]
pub struct Frame {
    pub at: DateTime<Utc>,
    /// From the charger (`true`) or to it.
    pub incoming: bool,
    /// Its text as shown: secrets masked, a cut one marked (`cms_ocpp::masking::shown`).
    pub shown: String,
}

/// A connection attempt: `refused` is cms's reason (`wrong_password`, ...), `None` when the
/// charger was let in.
#[derive(Debug, Clone)]
pub struct ConnectionAttempt {
    pub at: DateTime<Utc>,
    pub peer: String,
    pub refused: Option<String>,
}

/// No gateway answered for a charger's frames in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramesUnanswered;

/// A read of a charger's frames: at once from a gateway of the same process, or an answer
/// over the bus.
pub type FramesRead<'a> = BoxFuture<'a, Result<Vec<Frame>, FramesUnanswered>>;

pub trait ChargerDiagnostics: Send + Sync + 'static {
    /// The charger's last frames, newest first (none when none are kept); `connected`: the
    /// store shows it connected, so a gateway holds its session.
    fn frames<'a>(&'a self, identity: &'a str, connected: bool) -> FramesRead<'a>;
    /// The charger's last connection attempts, newest first.
    fn attempts(&self, identity: &str) -> Vec<ConnectionAttempt>;
}

/// Set once: by `cms up` with its gateway, by `cms api` with its follower of the connections
/// topic.
pub type DiagnosticsSlot = Arc<OnceLock<Arc<dyn ChargerDiagnostics>>>;
