//! Where the API reads a charger's diagnostics (`GET .../messages`, `.../connection-attempts`):
//! in `cms up` from its own gateway's memory; in `cms api` (the Kafka deployment) the
//! connection attempts from the connections topic (`crate::ingest::connection_attempts`), the
//! frames from nowhere yet (docs/decisions.md, "A charger's diagnostics").

use chrono::{DateTime, Utc};
use std::sync::{Arc, OnceLock};

/// A frame as a gateway kept it.
#[derive(Debug, Clone)]
pub struct Frame {
    pub at: DateTime<Utc>,
    /// From the charger (`true`) or to it.
    pub incoming: bool,
    /// Its first bytes (a gateway cuts a long frame).
    pub bytes: Vec<u8>,
    /// Its whole length.
    pub len: usize,
}

/// A connection attempt: `refused` is cms's reason (`wrong_password`, ...), `None` when the
/// charger was let in.
#[derive(Debug, Clone)]
pub struct ConnectionAttempt {
    pub at: DateTime<Utc>,
    pub peer: String,
    pub refused: Option<String>,
}

pub trait ChargerDiagnostics: Send + Sync + 'static {
    /// The charger's last frames, newest first; `None` when this process cannot read them.
    fn frames(&self, identity: &str) -> Option<Vec<Frame>>;
    /// The charger's last connection attempts, newest first.
    fn attempts(&self, identity: &str) -> Vec<ConnectionAttempt>;
}

/// Set once: by `cms up` with its gateway, by `cms api` with its follower of the connections
/// topic.
pub type DiagnosticsSlot = Arc<OnceLock<Arc<dyn ChargerDiagnostics>>>;
