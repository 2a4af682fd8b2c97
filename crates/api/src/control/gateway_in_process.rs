//! The gateway of the same process (`cms up`), whose charger registry and id tags follow the
//! store's change logs: a change made through the REST API is answered only once that gateway
//! has read it, so that a charger registered (201), or given a new password (200), connects
//! with it from the answer on, not a poll of the change logs later.

use cms_bus::BoxFuture;
use std::sync::{Arc, OnceLock};

pub trait GatewayInProcess: Send + Sync + 'static {
    /// Resolves once the gateway has read the change logs at least to where they stood when
    /// called, or has given up waiting for that (the change is in the store either way).
    fn read_changes(&self) -> BoxFuture<'_, ()>;
}

/// Set once, when the process has a gateway of its own; empty in `cms api`.
pub type GatewaySlot = Arc<OnceLock<Arc<dyn GatewayInProcess>>>;
